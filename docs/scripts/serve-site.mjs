// Serves docs/build the way the public site is served: compressed, with the `.html` and
// `/index.html` redirects (`/x.html` and `/x/index.html` to `/x`) and the not-found page for unknown paths.
// `docusaurus serve` does neither compression nor these redirects.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import compression from 'compression';
import sirv from 'sirv';
import { cleanDocsPath } from '../plugins/html-redirects/clean-path.mjs';

const usage = `Usage: npm run docs:serve -- [--port <port>] [--host <host>] [--dir <build folder>]

Serves the built docs site (npm run docs:build) as the public site is served.
  --port <port>   port to listen on (default: PORT, else 3000; 0 picks a free port)
  --host <host>   address to listen on (default: HOST, else 127.0.0.1)
  --dir <folder>  the built site (default: DOCS_BUILD_DIR, else docs/build)
  --no-open       accepted for docusaurus serve compatibility; nothing is opened anyway`;

// The options of \`docusaurus serve\` that apply here, so \`npm run docs:serve -- --port 4000\` works as there.
let options;
try {
  ({ values: options } = parseArgs({
    options: {
      port: { type: 'string', short: 'p' },
      host: { type: 'string', short: 'h' },
      dir: { type: 'string' },
      'no-open': { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (error) {
  console.error(`${error.message}\n\n${usage}`);
  process.exit(2);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const buildDir = resolve(options.dir ?? (process.env.DOCS_BUILD_DIR || join(docsDir, 'build')));
const portText = options.port ?? (process.env.PORT || '3000');
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65535) {
  console.error(`--port must be a whole number from 0 to 65535, got "${portText}"\n\n${usage}`);
  process.exit(2);
}
const host = options.host ?? (process.env.HOST || '127.0.0.1');

if (!existsSync(join(buildDir, 'index.html'))) {
  console.error(`No built site in ${buildDir}: run "npm run docs:build" first.`);
  process.exit(1);
}

const notFoundPage = readFileSync(join(buildDir, '404.html'));
const compress = compression();
const files = sirv(buildDir, {
  extensions: ['html'],
  // The .br and .gz copies written by scripts/precompress-site.mjs at build time; anything
  // without one (the 404 page) is compressed per request by `compress` above.
  brotli: true,
  gzip: true,
  etag: true,
  setHeaders(res, pathname) {
    // Hashed bundles never change; pages must be revalidated so a deploy shows at once.
    if (pathname.startsWith('/assets/'))
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    else res.setHeader('Cache-Control', 'public, max-age=0, must-revalidate');
  },
});

const server = createServer((req, res) => {
  compress(req, res, () => {
    const url = new URL(req.url ?? '/', 'http://docs.local');
    const clean = cleanDocsPath(url.pathname);
    if (clean !== url.pathname) {
      res.writeHead(301, { Location: clean + url.search });
      res.end();
      return;
    }
    files(req, res, () => {
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(notFoundPage);
    });
  });
});

server.once('error', (error) => {
  console.error(`Cannot listen on ${host}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, host, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  console.log(`Serving ${buildDir} at http://${shown}:${actualPort}/`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
