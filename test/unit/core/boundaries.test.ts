import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { sourceFiles as sources } from '../../support/source-files';

/** Module specifiers a file imports or re-exports, statically or with `import()`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)) {
    found.push(m[1] as string);
  }
  return found;
}

/** Where an import points: a Gatehouse package (`@gatehouse/core`, with its subpath) or a repository folder. */
function target(file: string, spec: string): { pkg?: string; sub?: string; dir?: string } {
  const pkg = /^@gatehouse\/([^/]+)(?:\/(.*))?$/.exec(spec);
  if (pkg) return { pkg: pkg[1] as string, ...(pkg[2] ? { sub: pkg[2] } : {}) };
  if (spec.startsWith('.')) return { dir: path.normalize(path.join(path.dirname(file), spec)) };
  return {};
}

/** The top folder of the repository a path is in (`plugins/community` counts as one). */
function area(p: string): string {
  const parts = p.split(path.sep);
  return parts[0] === 'plugins' || parts[0] === 'examples'
    ? parts.slice(0, 2).join('/')
    : (parts[0] as string);
}

/** Every import of the files under `dir` that `forbidden` flags, as `file: specifier`. */
function offending(dir: string, forbidden: (file: string, spec: string) => boolean): string[] {
  return sources(dir).flatMap((file) =>
    specifiers(readFileSync(file, 'utf8'))
      .filter((spec) => forbidden(file, spec))
      .map((spec) => `${file}: ${spec}`),
  );
}

/** A relative import that leaves the file's own area (`../plugins/x`, `../../agent/y`). */
const leavesArea = (file: string, spec: string) => {
  const t = target(file, spec);
  return t.dir !== undefined && area(t.dir) !== area(file);
};

/** The first import cycle among files (by path, with their text): relative imports, type imports included. */
function importCycle(texts: Map<string, string>): string[] | undefined {
  const resolve = (file: string, spec: string): string | undefined => {
    const t = target(file, spec);
    if (t.dir === undefined) return undefined;
    return [t.dir, `${t.dir}.ts`, `${t.dir}.tsx`, path.join(t.dir, 'index.ts')].find((f) => texts.has(f));
  };
  const edges = new Map<string, string[]>();
  for (const [file, text] of texts) {
    const to = specifiers(text).map((spec) => resolve(file, spec));
    edges.set(
      file,
      to.filter((f): f is string => f !== undefined),
    );
  }
  const done = new Set<string>();
  const visit = (file: string, trail: string[]): string[] | undefined => {
    const seen = trail.indexOf(file);
    if (seen >= 0) return [...trail.slice(seen), file];
    if (done.has(file)) return undefined;
    for (const next of edges.get(file) ?? []) {
      const found = visit(next, [...trail, file]);
      if (found) return found;
    }
    done.add(file);
    return undefined;
  };
  for (const file of texts.keys()) {
    const found = visit(file, []);
    if (found) return found;
  }
  return undefined;
}

/** The code of a source file without its comments (a `//` after a `:` is part of a URL). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

/** The editions of this repository, which only the host (server/) and the configuration name. */
const editions = ['community', 'enterprise', 'cloud'];

/** String literals in code that name an edition, or an edition's file (`cloud.yaml`, `community.json`). */
function editionNames(text: string): string[] {
  const literal = new RegExp(`['"\`/](${editions.join('|')})(\\.(yaml|json))?['"\`]`, 'g');
  return [...code(text).matchAll(literal)].map((m) => m[0]);
}

/** The repository's top folders besides core: a path core builds from one of them knows the layout. */
const repositoryFolders = [
  'agent',
  'bench',
  'bin',
  'config',
  'console-kit',
  'docs',
  'examples',
  'migrations',
  'plugins',
  'protocol',
  'scripts',
  'server',
  'test',
  'web',
];

/**
 * Where a file of `dir` finds files by the repository's layout: a path from its own location other than
 * `new URL('<inside dir>', import.meta.url)`, or a path joined from a repository folder's name.
 */
function layoutPaths(dir: string, file: string, text: string): string[] {
  const body = code(text);
  const found: string[] = [];
  const own = /new URL\(\s*'([^']+)'\s*,\s*import\.meta\.url\s*\)/g;
  for (const m of body.matchAll(own)) {
    const to = path.normalize(path.join(path.dirname(file), m[1] as string));
    if (to !== dir && !to.startsWith(`${dir}${path.sep}`)) found.push(m[0]);
  }
  for (const m of body.replace(own, '').matchAll(/import\.meta\.\w+|__dirname|__filename/g)) found.push(m[0]);
  for (const m of body.matchAll(/path\.(?:join|resolve)\(([^)]*)\)/g)) {
    for (const lit of (m[1] as string).matchAll(/['"`](?:\.{1,2}\/)*([\w-]+)/g)) {
      if (repositoryFolders.includes(lit[1] as string)) found.push(m[0]);
    }
  }
  return found;
}

const plugins = ['plugins/community', 'plugins/enterprise', 'plugins/cloud'];

/**
 * The package picture of the developer docs' architecture page, arrow by arrow. Each package may import only what
 * the picture draws: protocol nothing of Gatehouse; the agent only protocol; core neither a plugin nor the agent;
 * a plugin core, protocol and other plugins' public faces (their package name, never a file inside); the host
 * (server/) core and plugins' faces. Nothing but the agent itself imports the agent.
 */
describe('package boundaries', () => {
  it('finds the sources it checks, and reads imports as they are written', () => {
    expect(sources('core')).to.include(path.join('core', 'boot.ts'));
    expect(sources('protocol')).to.include(path.join('protocol', 'mux', 'index.ts'));
    expect(
      specifiers('import a from \'@gatehouse/plugin-x\';\nexport { b } from "../plugins/y";'),
    ).to.deep.equal(['@gatehouse/plugin-x', '../plugins/y']);
    expect(leavesArea(path.join('plugins', 'cloud', 'a.ts'), '../community/x')).to.equal(true);
    expect(leavesArea(path.join('plugins', 'cloud', 'a', 'b.ts'), '../c')).to.equal(false);
  });

  it('protocol imports nothing of Gatehouse: both ends depend on it, it on neither', () => {
    expect(offending('protocol', (f, s) => target(f, s).pkg !== undefined || leavesArea(f, s))).to.deep.equal(
      [],
    );
  });

  it('the agent imports only the protocol package of Gatehouse (and the product version)', () => {
    expect(
      offending('agent', (f, s) => {
        const t = target(f, s);
        // The product's one version number is the root package.json's, which every artifact reads.
        if (t.dir === 'package.json') return false;
        return (t.pkg !== undefined && t.pkg !== 'protocol') || leavesArea(f, s);
      }),
    ).to.deep.equal([]);
  });

  it('nothing outside agent/ imports the agent', () => {
    for (const dir of ['core', 'server', 'protocol', 'web', 'console-kit', ...plugins, 'examples']) {
      expect(
        offending(dir, (f, s) => {
          const t = target(f, s);
          return t.pkg === 'agent' || (t.dir !== undefined && area(t.dir) === 'agent');
        }),
        dir,
      ).to.deep.equal([]);
    }
  });

  it('core imports no plugin, no agent and no protocol, and does not even name a plugin folder', () => {
    expect(
      offending('core', (f, s) => {
        const t = target(f, s);
        return (t.pkg !== undefined && t.pkg !== 'core') || leavesArea(f, s);
      }),
    ).to.deep.equal([]);
    expect(sources('core').filter((file) => readFileSync(file, 'utf8').includes('plugins/'))).to.deep.equal(
      [],
    );
  });

  it("core names no edition: which editions there are is the host's to say", () => {
    expect(
      editionNames("const known = ['community', 'cloud']; // cloud billing\nconst f = `cloud.yaml`;"),
    ).to.deep.equal(["'community'", "'cloud'", '`cloud.yaml`']);
    expect(
      editionNames("const url = cloudUrl; /* the enterprise edition */ get('/openapi/x.json');"),
    ).to.deep.equal([]);
    expect(
      sources('core').flatMap((file) => editionNames(readFileSync(file, 'utf8')).map((n) => `${file}: ${n}`)),
    ).to.deep.equal([]);
  });

  it('core holds no repository path: the host hands it the configuration and console folders', () => {
    const file = path.join('core', 'store', 'migrate.ts');
    expect(
      layoutPaths('core', file, "const dir = new URL('../migrations/', import.meta.url);"),
    ).to.deep.equal([]);
    expect(
      layoutPaths(
        'core',
        file,
        "new URL('../../config/', import.meta.url); path.dirname(fileURLToPath(import.meta.url));\n" +
          "path.join(root, 'web', 'dist'); path.join(dataDir, 'pglite'); // new URL('../..', import.meta.url)",
      ),
    ).to.deep.equal([
      "new URL('../../config/', import.meta.url)",
      'import.meta.url',
      "path.join(root, 'web', 'dist')",
    ]);
    expect(
      sources('core').flatMap((f) =>
        layoutPaths('core', f, readFileSync(f, 'utf8')).map((p) => `${f}: ${p}`),
      ),
    ).to.deep.equal([]);
  });

  it("core's modules import one another without a cycle: the container holds no kernel, no type leads back to boot", () => {
    const a = path.join('x', 'a.ts');
    const b = path.join('x', 'y', 'b.ts');
    const circle = new Map([
      [a, "import { b } from './y/b';"],
      [b, "import type { A } from '../a';"],
    ]);
    expect(importCycle(circle)).to.deep.equal([a, b, a]);
    expect(
      importCycle(
        new Map([
          [a, "import { b } from './y/b';"],
          [b, ''],
        ]),
      ),
    ).to.equal(undefined);
    const core = new Map(sources('core').map((file) => [file, readFileSync(file, 'utf8')]));
    expect(importCycle(core)).to.equal(undefined);
  });

  it('a plugin reaches another plugin only through its public face, and no file of another package', () => {
    for (const dir of [...plugins, 'examples/hello-plugin']) {
      expect(
        offending(dir, (f, s) => {
          const t = target(f, s);
          if (t.pkg?.startsWith('plugin-')) return t.sub !== undefined;
          if (t.pkg === 'core' || t.pkg === 'protocol' || t.pkg === 'console') return false;
          return t.pkg !== undefined || leavesArea(f, s);
        }),
        dir,
      ).to.deep.equal([]);
    }
  });

  it('each bundled plugin exports its index only: its face is what the index names', () => {
    for (const dir of plugins) {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        exports: unknown;
      };
      expect(manifest.exports, dir).to.deep.equal({ '.': './index.ts' });
    }
  });

  it('the web shell names no plugin: plugins add their screens through it', () => {
    expect(
      offending('web', (f, s) => {
        const t = target(f, s);
        // console-kit is the shell's own kit for plugin screens: what both share.
        if (t.dir !== undefined && area(t.dir) === 'console-kit') return false;
        return t.pkg?.startsWith('plugin-') === true || leavesArea(f, s);
      }),
    ).to.deep.equal([]);
  });
});
