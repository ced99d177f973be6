// The docs may only name configuration variables, keys and commands that exist: every
// GATEHOUSE_* variable, every key of a configuration YAML example, every default in a
// settings table and every `gatehouse <command> --option` is checked against what the
// server and the agent say about themselves (`gatehouse reference --json`,
// `gatehouse-agent --help`) and against the few variables the config loader and the docs
// build read directly.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { docsDir, placeholderHost } from './docs-site';

const repoDir = resolve(docsDir, '..');

interface Reference {
  config: { key: string; env?: string; default?: unknown }[];
  commands: { name: string; options?: { flags: string }[] }[];
}

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return /\.mdx?$/.test(entry.name) ? [path] : [];
  });
}

/** Both the current docs (content/) and every frozen release's copy (versioned_docs/). */
const pages = [
  ...markdownFiles(join(docsDir, 'content')),
  ...markdownFiles(join(docsDir, 'versioned_docs')),
].map((path) => ({ name: relative(docsDir, path), text: readFileSync(path, 'utf8') }));

/** Source files of the console: the shell and every edition's screens. */
function consoleFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist'].includes(entry.name) ? [] : consoleFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/**
 * What the console shows a person: JSX text, and the strings given as labels, titles and button texts. The docs
 * may only name screens, tabs and buttons found here.
 */
function consoleLabels(): Set<string> {
  const files = [
    ...consoleFiles(join(repoDir, 'web', 'src')),
    ...['community', 'enterprise', 'cloud'].flatMap((p) => consoleFiles(join(repoDir, 'plugins', p, 'web'))),
  ];
  const labels = new Set<string>();
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    // JSX text, also after an icon: `{icons.plus} Add rule`.
    for (const m of source.matchAll(/[>}]([^<>{}]+)</g)) labels.add((m[1] ?? '').replace(/\s+/g, ' ').trim());
    for (const m of source.matchAll(
      /\b(?:label|title|submitLabel|confirmLabel|heading)(?:=\{?|:\s*)(['"`])([^'"`$]+)\1/g,
    ))
      labels.add((m[2] ?? '').trim());
    // Text inside JSX expressions, such as {busy ? 'Saving' : 'Save'}.
    for (const m of source.matchAll(/[?:]\s*'([A-Z][^'$]*)'/g)) labels.add((m[1] ?? '').trim());
  }
  labels.delete('');
  return labels;
}

// By default the cloud edition: it loads every bundled plugin, so its reference lists every command the docs name.
function gatehouse(
  args: string[],
  env: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_EDITION: 'cloud' },
): string {
  return execFileSync(process.execPath, [join(repoDir, 'bin', 'gatehouse.js'), ...args], {
    cwd: repoDir,
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
}

/**
 * The environment of a server running community plus the example plugin (examples/hello-plugin, from its source):
 * the plugin guide names that plugin's calls and commands, which are real once it is installed.
 */
function withExamplePlugin(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'gh-docs-example-'));
  const file = join(dir, 'gatehouse.yaml');
  writeFileSync(file, `plugins: [community, ${join(repoDir, 'examples/hello-plugin/src/index.ts')}]\n`);
  return { ...process.env, GATEHOUSE_CONFIG: file };
}

/** Dotted paths of every leaf of a parsed YAML document. */
function leafKeys(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix];
  return Object.entries(value).flatMap(([key, child]) => leafKeys(child, prefix ? `${prefix}.${key}` : key));
}

describe('configuration names and commands in the docs', function () {
  this.timeout(90_000);
  let reference: Reference;
  let known: Set<string>;

  before(() => {
    reference = JSON.parse(gatehouse(['reference', '--json'])) as Reference;
    // The example plugin's commands (`gatehouse hello summary`), named by the plugin guide.
    const example = JSON.parse(gatehouse(['reference', '--json'], withExamplePlugin())) as Reference;
    const names = new Set(reference.commands.map((c) => c.name));
    reference.commands.push(...example.commands.filter((c) => !names.has(c.name)));
    // The device agent's options and the connector's (`gatehouse-agent connector --help`).
    const agentHelp = [['--help'], ['connector', '--help']]
      .map((args) =>
        execFileSync(process.execPath, [join(repoDir, 'agent', 'bin', 'gatehouse-agent.mjs'), ...args], {
          cwd: repoDir,
          encoding: 'utf8',
          timeout: 60_000,
        }),
      )
      .join('\n');
    // Read straight from the environment rather than mapped to a key: GATEHOUSE_CONFIG
    // (the extra YAML file) by the config loader, the document sources by the docs build.
    const readDirectly = [
      join(repoDir, 'core', 'config', 'load.ts'),
      join(docsDir, 'scripts', 'export-api.mjs'),
    ]
      .map((path) => readFileSync(path, 'utf8'))
      .flatMap((source) =>
        [...source.matchAll(/env\.(GATEHOUSE_[A-Z0-9_]+)/g)].map((match) => match[1] ?? ''),
      );
    // The connector mode's own settings (`gatehouse-agent connector --help`).
    const connectorHelp = execFileSync(
      process.execPath,
      [join(repoDir, 'agent', 'bin', 'gatehouse-agent.mjs'), 'connector', '--help'],
      { cwd: repoDir, encoding: 'utf8', timeout: 60_000 },
    );
    // The agent's installer reads its own settings as shell variables (`${GATEHOUSE_INIT:-}`).
    const installer = readFileSync(join(repoDir, 'agent', 'packaging', 'install.sh'), 'utf8');
    const installerReads = [...installer.matchAll(/\$\{(GATEHOUSE_[A-Z0-9_]+)/g)].map(
      (match) => match[1] ?? '',
    );
    known = new Set([
      ...reference.config.flatMap((item) => (item.env ? [item.env] : [])),
      ...(agentHelp.match(/GATEHOUSE_[A-Z0-9_]+/g) ?? []),
      ...(connectorHelp.match(/GATEHOUSE_[A-Z0-9_]+/g) ?? []),
      ...readDirectly,
      ...installerReads,
    ]);
  });

  it('finds the pages and the names to check them against', () => {
    expect(pages.length).to.be.greaterThan(50);
    expect(known.has('GATEHOUSE_HTTP_PORT'), 'a server variable').to.equal(true);
    expect(known.has('GATEHOUSE_TENANT_ID'), 'an agent variable').to.equal(true);
    expect(known.has('GATEHOUSE_CONFIG'), 'the extra YAML file').to.equal(true);
  });

  it('names only GATEHOUSE_* variables that the server, the agent or the docs build read', () => {
    const unknown = pages.flatMap(({ name, text }) =>
      [...new Set(text.match(/GATEHOUSE_[A-Z0-9_]+/g) ?? [])]
        .filter((variable) => !known.has(variable))
        .map((variable) => `${name}: ${variable}`),
    );
    expect(unknown).to.deep.equal([]);
  });

  it('gives the real default in every settings table row', () => {
    const defaults = new Map(
      reference.config.flatMap((item) => (item.env ? [[item.env, item.default]] : [])),
    );
    const wrong: string[] = [];
    for (const { name, text } of pages) {
      for (const match of text.matchAll(/^\| `(GATEHOUSE_[A-Z0-9_]+)` \| (`[^`]*`|unset) \|/gm)) {
        const [, variable = '', shown = ''] = match;
        if (!defaults.has(variable)) continue;
        let actual = defaults.get(variable);
        // The data directory default is resolved against the folder the server runs in;
        // the docs (and scripts/export-api.mjs) show it relative to that folder.
        if (typeof actual === 'string' && actual.startsWith(`${repoDir}/`)) {
          actual = `./${actual.slice(repoDir.length + 1)}`;
        }
        const expected =
          actual === undefined || actual === null || actual === '' ? 'unset' : `\`${String(actual)}\``;
        if (shown !== expected)
          wrong.push(`${name}: ${variable} shows ${shown}, the server says ${expected}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('uses only real configuration keys in YAML configuration examples', () => {
    const keys = new Set(reference.config.map((item) => item.key));
    const checked: string[] = [];
    const unknown: string[] = [];
    for (const { name, text } of pages) {
      for (const match of text.matchAll(/^ *```ya?ml[^\n]*\n([\s\S]*?)^ *```/gm)) {
        const body = match[1] ?? '';
        // Only server configuration files: they say so in their first line.
        if (!/GATEHOUSE_CONFIG/.test(body.split('\n')[0] ?? '')) continue;
        for (const key of leafKeys(parseYaml(body))) {
          checked.push(key);
          if (!keys.has(key)) unknown.push(`${name}: ${key}`);
        }
      }
    }
    expect(checked.length, 'the configuring page has a YAML example').to.be.greaterThan(0);
    expect(unknown).to.deep.equal([]);
  });

  it('names only files that exist in the repository', () => {
    // Paths such as config/default.yaml or (inside an install folder) agent/bin/gatehouse-agent.mjs; not URL paths
    // such as $SERVER/agent/install.sh, which the server answers.
    const pattern =
      /(?<![/\w-])((?:agent|bin|core|config|plugins|migrations|test|bench|docs|scripts)\/[A-Za-z0-9_./-]+\.(?:mjs|js|ts|tsx|yaml|service|sh))\b/g;
    const named = pages.flatMap(({ name, text }) =>
      [...text.matchAll(pattern)].map((match) => ({ name, path: match[1] ?? '' })),
    );
    expect(named.map((entry) => entry.path)).to.include('config/default.yaml');
    const missing = named
      .filter(({ path }) => !existsSync(join(repoDir, path)))
      .map(({ name, path }) => `${name}: ${path}`);
    expect(missing).to.deep.equal([]);
  });

  it('names only screens, tabs and buttons the console has', () => {
    const labels = consoleLabels();
    expect(labels.has('Devices'), 'the navigation').to.equal(true);
    const named: string[] = [];
    const wrong: string[] = [];
    for (const { name, text } of pages) {
      // **Settings → Members → Add member** paths, and "select **Accept**"-style instructions.
      const paths = [...text.matchAll(/\*\*([^*\n]+→[^*\n]+)\*\*/g)].map((m) => m[1] ?? '');
      const actions = [
        ...text.matchAll(/\b(?:[Ss]elect|[Cc]hoose|[Oo]pen|[Pp]ress|[Cc]lick|[Uu]se) \*\*([^*→\n]+)\*\*/g),
      ].map((m) => m[1] ?? '');
      // Form fields after "... and fill in:": "- **Priority**: ..." items, or a "| Field |" table's first column.
      const fields: string[] = [];
      for (const form of text.matchAll(/fill in:\n\n((?:[-|][^\n]*\n?)+)/g)) {
        for (const line of (form[1] ?? '').split('\n')) {
          const item = /^- \*\*([^*]+)\*\*:/.exec(line)?.[1];
          const cell = /^\| ([^|]+?) \|/.exec(line)?.[1];
          if (item) fields.push(item);
          else if (cell && cell !== 'Field' && !/^-+$/.test(cell)) fields.push(cell);
        }
      }
      expect(fields.length === 0 || fields.every(Boolean)).to.equal(true);
      for (const item of [...paths, ...actions, ...fields]) {
        for (const part of item.split('→').map((p) => p.trim())) {
          // "the device" stands for the one the reader picked.
          if (/^the /.test(part)) continue;
          named.push(part);
          if (!labels.has(part)) wrong.push(`${name}: **${item}**: the console has no "${part}"`);
        }
      }
    }
    expect(named).to.include('Add member');
    expect(named, 'form fields').to.include('Source IP pattern');
    expect(wrong).to.deep.equal([]);
  });

  it('names only API paths the server serves', () => {
    // The cloud edition's calls (billing, invitations) are named by the cloud pages, the example plugin's by the
    // plugin guide.
    const documents = [
      ...['community', 'cloud'].map((edition) => gatehouse(['openapi', edition])),
      gatehouse(['openapi'], withExamplePlugin()),
    ];
    const paths = documents.flatMap((doc) =>
      Object.keys((JSON.parse(doc) as { paths: Record<string, unknown> }).paths),
    );
    // `{tenant}` in the document, `<tenant-id>` or `{tenant}` in the docs: any one segment.
    const served = paths.map((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`));
    const named: string[] = [];
    const wrong: string[] = [];
    for (const { name, text } of pages) {
      for (const m of text.matchAll(
        /(?<![\w.:/-])(\/(?:api|internal)\/[A-Za-z0-9_{}<>/.-]*[A-Za-z0-9_}>])/g,
      )) {
        const path = (m[1] ?? '').replace(/<[^>]+>/g, 'x').replace(/\{[^}]+\}/g, 'x');
        named.push(path);
        if (!served.some((re) => re.test(path))) wrong.push(`${name}: ${m[1]} is not served`);
      }
    }
    expect(named.length).to.be.greaterThan(5);
    expect(wrong).to.deep.equal([]);
  });

  it('links only to real addresses, never a placeholder host', () => {
    const wrong: string[] = [];
    for (const { name, text } of pages) {
      // Links people follow; addresses inside code are examples of their own server.
      const prose = text.replace(/^ *```[\s\S]*?^ *```/gm, '').replace(/`[^`\n]*`/g, '');
      for (const m of prose.matchAll(/\]\((https?:\/\/[^)\s]+)\)|<(https?:\/\/[^>\s]+)>/g)) {
        const url = new URL(m[1] ?? m[2] ?? '');
        if (placeholderHost(url.hostname)) wrong.push(`${name}: ${url.href}`);
      }
    }
    // The site's own address (DOCS_SITE_URL, for the sitemap and canonical links) is no link to follow.
    const config = readFileSync(join(docsDir, 'docusaurus.config.ts'), 'utf8')
      .split('\n')
      .filter((line) => !line.includes('DOCS_SITE_URL'))
      .join('\n');
    for (const m of config.matchAll(/['"`](https?:\/\/[^'"`\s]+)['"`]/g)) {
      const url = new URL(m[1] ?? '');
      if (placeholderHost(url.hostname)) wrong.push(`docusaurus.config.ts: ${url.href}`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it('names only real gatehouse commands and options', () => {
    const commands = new Map(
      reference.commands.map((command) => [
        command.name,
        new Set((command.options ?? []).flatMap((option) => option.flags.match(/--[a-z-]+/g) ?? [])),
      ]),
    );
    const mentions: string[] = [];
    const wrong: string[] = [];
    for (const { name, text } of pages) {
      // `npx gatehouse x`, `gatehouse x` and `node bin/gatehouse.js x` in code; prose says "Gatehouse".
      for (const match of text.matchAll(
        // Not the container named gatehouse in `podman exec gatehouse gatehouse user ...`.
        /(?<!exec)(?:^|[`\s])(?:npx |node bin\/)?gatehouse(?:\.js)? ([a-z][a-z-]*)([^`\n]*)/gm,
      )) {
        const [, first = '', rest = ''] = match;
        const second = /^ ([a-z][a-z-]*)/.exec(rest)?.[1];
        const command = second && commands.has(`${first} ${second}`) ? `${first} ${second}` : first;
        mentions.push(command);
        const options = commands.get(command);
        if (!options) {
          wrong.push(`${name}: gatehouse ${first} is not a command`);
          continue;
        }
        for (const flag of rest.match(/(?<=\s)--[a-z-]+/g) ?? []) {
          if (!options.has(flag) && flag !== '--help')
            wrong.push(`${name}: gatehouse ${command} has no ${flag}`);
        }
      }
    }
    expect(mentions).to.include('setup-url');
    expect(wrong).to.deep.equal([]);
  });
});
