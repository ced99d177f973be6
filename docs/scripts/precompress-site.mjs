// Writes a brotli (.br) and a gzip (.gz) copy beside every text file of docs/build, once
// per build, at the highest settings. scripts/serve-site.mjs serves those copies as they
// are; compressing on each request (the `compression` middleware) can only afford a fast
// brotli level, which left the main bundle 18% larger on the wire and cost Lighthouse
// performance on a throttled connection (bench/RESULTS.md, docs section).
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const buildDir = resolve(process.env.DOCS_BUILD_DIR ?? join(docsDir, 'build'));
const compressible = new Set(['.html', '.js', '.css', '.json', '.svg', '.xml', '.txt', '.map']);
// Below this a compressed copy saves less than its headers and a disk read cost.
const minimumBytes = 1024;

async function* textFiles(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* textFiles(path);
    else if (compressible.has(extname(entry.name)) && (await stat(path)).size >= minimumBytes) yield path;
  }
}

async function precompress(path) {
  const data = await readFile(path);
  const [br, gz] = await Promise.all([
    brotli(data, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    }),
    gzipAsync(data, { level: 9 }),
  ]);
  await Promise.all([writeFile(`${path}.br`, br), writeFile(`${path}.gz`, gz)]);
  return { raw: data.length, br: br.length };
}

const started = performance.now();
const paths = [];
for await (const path of textFiles(buildDir)) paths.push(path);
let raw = 0;
let compressed = 0;
// zlib's asynchronous calls run on libuv's thread pool, so a few at a time use every core.
for (let i = 0; i < paths.length; i += 8) {
  for (const sizes of await Promise.all(paths.slice(i, i + 8).map(precompress))) {
    raw += sizes.raw;
    compressed += sizes.br;
  }
}
console.log(
  `docs: precompressed ${paths.length} files (${(raw / 1024).toFixed(0)} KiB -> ${(compressed / 1024).toFixed(0)} KiB brotli) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
