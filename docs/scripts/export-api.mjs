// Writes the documents the site renders from the server's own code into docs/generated/
// (gitignored): the community and cloud OpenAPI documents, the configuration/CLI
// reference and the permission matrix of each edition (who may make each call, taken
// from the route tables). Sources, first that is set wins:
//   GATEHOUSE_OPENAPI_DIR  a folder with the files named in `documents` below
//   GATEHOUSE_OPENAPI_URL  a base URL serving the same files
//   otherwise              `node bin/gatehouse.js openapi <edition>`, `reference --json`
//                          and `permissions <edition> --json`
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = resolve(docsDir, '..');
const outDir = join(docsDir, 'generated');
const documents = [
  { file: 'community.json', args: ['openapi', 'community'], kind: 'openapi' },
  { file: 'cloud.json', args: ['openapi', 'cloud'], kind: 'openapi' },
  { file: 'reference.json', args: ['reference', '--json'], kind: 'reference' },
  ...['community', 'enterprise', 'cloud'].map((edition) => ({
    file: `permissions-${edition}.json`,
    args: ['permissions', edition, '--json'],
    kind: 'permissions',
  })),
];

function check(kind, file, text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${error.message}`);
  }
  if (kind === 'openapi' && (typeof value.openapi !== 'string' || typeof value.paths !== 'object')) {
    throw new Error(`${file} is not an OpenAPI document (no "openapi" version or "paths")`);
  }
  if (kind === 'reference' && (!Array.isArray(value.config) || !Array.isArray(value.commands))) {
    throw new Error(`${file} is not a reference document (needs "config" and "commands" lists)`);
  }
  if (kind === 'reference') {
    // The server resolves relative defaults (the data directory) against the folder it
    // runs in; the docs show them relative to that folder, not as this build machine's path.
    for (const item of value.config) {
      if (typeof item.default === 'string' && item.default.startsWith(`${repoDir}/`)) {
        item.default = `./${item.default.slice(repoDir.length + 1)}`;
      }
    }
  }
  if (
    kind === 'permissions' &&
    !(
      Array.isArray(value) &&
      value.every(
        (row) =>
          typeof row.method === 'string' &&
          typeof row.path === 'string' &&
          typeof row.callers === 'object' &&
          Array.isArray(row.roles),
      )
    )
  ) {
    throw new Error(
      `${file} is not a permission matrix (a list of calls with method, path, callers and roles)`,
    );
  }
  return `${JSON.stringify(value, null, 2)}\n`;
}

async function read({ file, args }) {
  const dir = process.env.GATEHOUSE_OPENAPI_DIR;
  if (dir) return { source: join(dir, file), text: readFileSync(join(dir, file), 'utf8') };
  const base = process.env.GATEHOUSE_OPENAPI_URL;
  if (base) {
    const url = new URL(file, base.endsWith('/') ? base : `${base}/`);
    const answer = await fetch(url);
    if (!answer.ok) throw new Error(`GET ${url} answered ${answer.status}`);
    return { source: url.href, text: await answer.text() };
  }
  const cli = join(repoDir, 'bin', 'gatehouse.js');
  if (!existsSync(cli)) {
    throw new Error(
      `${cli} does not exist yet. Set GATEHOUSE_OPENAPI_DIR or GATEHOUSE_OPENAPI_URL to build the docs without the server.`,
    );
  }
  const text = execFileSync(process.execPath, [cli, ...args], {
    cwd: repoDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { source: `gatehouse ${args.join(' ')}`, text };
}

mkdirSync(outDir, { recursive: true });
try {
  for (const document of documents) {
    const { source, text } = await read(document);
    writeFileSync(join(outDir, document.file), check(document.kind, document.file, text));
    console.log(`docs: wrote generated/${document.file} from ${source}`);
  }
} catch (error) {
  console.error(`docs: cannot export the API documents: ${error.message}`);
  process.exit(1);
}
