import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

/** Every TypeScript file under a folder (no node_modules). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(full);
    return /\.(ts|tsx|js|mjs)$/.test(e.name) ? [full] : [];
  });
}

/** Module specifiers a file imports or re-exports, statically or with `import()`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)) {
    found.push(m[1] as string);
  }
  return found;
}

/**
 * Core is a library that knows the plugin contract and never a plugin (issue 13, DESIGN.md section 3): the host
 * (server/) is the one place that names plugins. This holds for imports and for any mention of a plugin's path.
 */
describe('core and the plugins', () => {
  const files = sources('core');

  it('finds the core sources it checks', () => {
    expect(files).to.include(path.join('core', 'boot.ts'));
    expect(
      specifiers('import a from \'@gatehouse/plugin-x\';\nexport { b } from "../plugins/y";'),
    ).to.deep.equal(['@gatehouse/plugin-x', '../plugins/y']);
  });

  it('imports nothing from plugins/ nor any @gatehouse/plugin-* package', () => {
    const offending = files.flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .filter((s) => s.startsWith('@gatehouse/plugin-') || /(^|\/)plugins\//.test(s))
        .map((s) => `${file}: ${s}`),
    );
    expect(offending).to.deep.equal([]);
  });

  it('does not even name a plugin folder (grep -r "plugins/" core/ finds nothing)', () => {
    const offending = files.filter((file) => readFileSync(file, 'utf8').includes('plugins/'));
    expect(offending).to.deep.equal([]);
  });
});
