import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import { sourceFiles } from '../../support/source-files';

/**
 * The server's packages and the console's. The agent is left out: its package.json also pins the native addons its
 * bundle ships beside itself (agent/build.ts), which no file of it imports by name.
 */
const packages = [
  'core',
  'server',
  'protocol',
  'plugins/community',
  'plugins/enterprise',
  'plugins/cloud',
  'web',
  'console-kit',
];

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** The npm packages a source text imports (by package name: `@scope/name` or `name`), built-in modules left out. */
function importedPackages(text: string): string[] {
  const found = new Set<string>();
  const spec =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)(?:\/[^'"]*)?['"]/g;
  for (const m of text.matchAll(spec)) {
    const name = m[1] as string;
    if (!builtinModules.includes(name)) found.add(name);
  }
  return [...found];
}

/** What a package imports, by package, with the first file that does. */
function imports(dir: string): Map<string, string> {
  const own = manifestOf(dir).name;
  const out = new Map<string, string>();
  for (const file of sourceFiles(dir)) {
    for (const name of importedPackages(readFileSync(file, 'utf8'))) {
      if (name !== own && !out.has(name)) out.set(name, file);
    }
  }
  return out;
}

/** Each package brings its own: what it imports is in its package.json, and what it depends on it uses. */
describe('package dependencies', () => {
  it('reads imports by package name', () => {
    expect(
      importedPackages(
        "import a from '@xterm/xterm';\nimport type { B } from 'knex';\nimport { c } from 'node:fs';\n" +
          "import path from 'path';\nconst d = await import('@gatehouse/core/config/load');\nimport './style.css';",
      ),
    ).to.deep.equal(['@xterm/xterm', 'knex', '@gatehouse/core']);
  });

  it("each package declares every package it imports (its console screens' too)", () => {
    const undeclared = packages.flatMap((dir) => {
      const m = manifestOf(dir);
      const declared = { ...m.peerDependencies, ...m.devDependencies, ...m.dependencies };
      return [...imports(dir)]
        .filter(([name]) => !(name in declared))
        .map(([name, file]) => `${dir}: ${name} (${file})`);
    });
    // The agent's package may be imported by nobody but the agent: the boundary test names that import already.
    expect(undeclared.filter((line) => !line.includes('@gatehouse/agent'))).to.deep.equal([]);
  });

  it("each package depends on nothing it does not import (another package's screens bring their own)", () => {
    const unused = packages.flatMap((dir) => {
      const used = imports(dir);
      return Object.keys(manifestOf(dir).dependencies ?? {})
        .filter((name) => !name.startsWith('@types/') && !used.has(name))
        .map((name) => `${dir}: ${name}`);
    });
    expect(unused).to.deep.equal([]);
  });

  it('each bundled plugin builds its own console screens, and the root build runs every build', () => {
    const root = manifestOf('.');
    for (const dir of ['plugins/community', 'plugins/enterprise', 'plugins/cloud']) {
      expect(manifestOf(dir).scripts?.build, dir).to.equal('vite build -c web/vite.config.ts');
      expect(root.scripts?.build, dir).to.include(`-w ${dir}`);
    }
    expect(manifestOf('web').scripts?.build).to.equal('vite build');
    expect(root.scripts?.prepare).to.match(/^npm run build && /);
  });
});
