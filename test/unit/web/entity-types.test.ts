import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

// The console's entity types are the server's: a plugin's screens take them from the TypeBox schema modules beside
// its routes (`Static<...>`), as types only. Vite drops an `import type` (or `export type`) statement entirely, so
// no server code reaches the browser bundle; an `import { type X }` would still load the module, and a value
// import would bundle it. The schema modules reached that way import TypeBox and each other, nothing else: the
// console's type-check then never reads server code either. The developer docs' architecture page, "Entities,
// schemas and types", says why.

/** The console's own sources: the shell and each plugin's `web/` folder (not their build output). */
function consoleSources(): string[] {
  const roots = [
    'web/src',
    ...readdirSync('plugins').map((p) => path.join('plugins', p, 'web')),
    ...readdirSync('test/fixtures').map((p) => path.join('test/fixtures', p, 'web')),
  ].filter((dir) => existsSync(dir) && statSync(dir).isDirectory());
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return ['node_modules', 'dist'].includes(e.name) ? [] : walk(full);
      return /\.(ts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts') && e.name !== 'vite.config.ts'
        ? [full]
        : [];
    });
  return roots.flatMap(walk);
}

interface Statement {
  /** `import type ...` or `export type ... from`: erased from the bundle. */
  typeOnly: boolean;
  spec: string;
  text: string;
}

/** The import and re-export statements of a module, and whether each is type-only as a whole. */
function statements(source: string): Statement[] {
  const found: Statement[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?(?:[^;'"]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(re)) {
    found.push({ typeOnly: m[2] !== undefined, spec: m[3] as string, text: m[0].trim() });
  }
  for (const m of source.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ typeOnly: false, spec: m[1] as string, text: m[0] });
  }
  return found;
}

/** The file a relative specifier names (`.ts`, `.tsx`, or a folder's index). */
function resolve(from: string, spec: string): string {
  const base = path.normalize(path.join(path.dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${from}: cannot resolve ${spec}`);
}

/** Whether a file is console code: under a `web/` folder of a plugin or fixture, or the shell's `web/`. */
const inConsole = (file: string) => file.split(path.sep).includes('web');

/** The server modules the console reaches, each with the console file that reaches it. */
function serverModulesReached(): Map<string, string> {
  const reached = new Map<string, string>();
  for (const file of consoleSources()) {
    for (const s of statements(readFileSync(file, 'utf8'))) {
      if (!s.spec.startsWith('.')) continue;
      const target = resolve(file, s.spec);
      if (!inConsole(target)) reached.set(target, file);
    }
  }
  return reached;
}

describe('console: entity types come from the server schemas, as types only', () => {
  it('reads import statements as they are written', () => {
    expect(
      statements(
        "import type { A } from '../a/schemas';\nimport { type B } from './b';\nexport type { C as D } from '../c';\n" +
          "import { x } from '@gatehouse/console';\nimport './side-effect.css';\nconst m = import('./lazy');",
      ).map((s) => [s.typeOnly, s.spec]),
    ).to.deep.equal([
      [true, '../a/schemas'],
      [false, './b'],
      [true, '../c'],
      [false, '@gatehouse/console'],
      [false, './side-effect.css'],
      [false, './lazy'],
    ]);
  });

  it('takes the community entities from the schema modules beside their routes', () => {
    const reached = [...serverModulesReached().keys()];
    expect(reached).to.include(path.join('plugins', 'community', 'devices', 'schemas.ts'));
    expect(reached).to.include(path.join('plugins', 'community', 'sessions', 'schemas.ts'));
  });

  it('imports server modules only with `import type` or `export type`, so none reaches the bundle', () => {
    const offending: string[] = [];
    for (const file of consoleSources()) {
      for (const s of statements(readFileSync(file, 'utf8'))) {
        if (!s.spec.startsWith('.') || s.typeOnly) continue;
        if (!inConsole(resolve(file, s.spec))) offending.push(`${file}: ${s.text}`);
      }
    }
    expect(offending).to.deep.equal([]);
  });

  it('reaches only schema modules: they import TypeBox and each other, no other server code', () => {
    const offending: string[] = [];
    const seen = new Set<string>();
    const queue = [...serverModulesReached().keys()];
    while (queue.length) {
      const file = queue.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const s of statements(readFileSync(file, 'utf8'))) {
        if (s.spec.startsWith('.')) queue.push(resolve(file, s.spec));
        else if (s.spec !== '@sinclair/typebox') offending.push(`${file}: ${s.text}`);
      }
    }
    expect(seen.size).to.be.greaterThan(0);
    expect(offending).to.deep.equal([]);
  });
});
