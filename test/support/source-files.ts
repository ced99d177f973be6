import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Every source file under a folder (no node_modules, no build output, no type declarations). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'dist'].includes(e.name) ? [] : sourceFiles(full);
    return /\.(ts|tsx|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}
