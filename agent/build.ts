/**
 * Builds what a device owner installs (npm run build -w agent, which then runs build-executable.ts; `--out DIR`
 * builds into another folder than agent/dist, as the release does):
 *
 *   agent/dist/gatehouse-agent/               the install tree, for /opt/gatehouse-agent
 *     gatehouse-agent.mjs                     our code and ws in one ESM file
 *     package.json                            the native dependencies, pinned
 *     node_modules/                           ssh2, @lydell/node-pty, koffi for this platform
 *     gatehouse-agent.service, install.sh     systemd unit and installer
 *   agent/dist/gatehouse-agent-linux-<arch>.tar.gz
 *
 * Native addons stay outside the bundle: ssh2's crypto binding, node-pty and koffi load
 * .node files relative to their own package, and ssh2 silently drops to slow JavaScript
 * crypto when its binding is not found.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { architecture } from './identity';
import { agentDistDir, bundleFileName } from './packaging/bundle';

const agentDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
const distDir = values.out ? resolve(values.out) : agentDistDir;
const out = join(distDir, 'gatehouse-agent');

/** Runtime packages kept as files, with what they need at run time on this platform. */
const platform = `${process.platform}-${process.arch}`;
const NATIVE = ['ssh2', '@lydell/node-pty', 'koffi'];
const CARRIED = [
  'ssh2',
  'asn1',
  'safer-buffer',
  'bcrypt-pbkdf',
  'tweetnacl',
  '@lydell/node-pty',
  `@lydell/node-pty-${platform}`,
  'koffi',
  `@koromix/koffi-${platform}`,
];

/** The installed folder of a package, found as Node would, without its exports map in the way. */
function packageDir(name: string): string {
  for (let dir = agentDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed; run npm install first`);
  }
}

rmSync(distDir, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [join(agentDir, 'main.ts')],
  outfile: join(out, 'gatehouse-agent.mjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: NATIVE,
  // ws and the natives are CommonJS; give the ESM bundle a require for them. The hashbang
  // comes from main.ts, which esbuild keeps on the first line.
  banner: {
    js: "import { createRequire as __gatehouseRequire } from 'node:module';\nconst require = __gatehouseRequire(import.meta.url);",
  },
  legalComments: 'none',
  logLevel: 'warning',
});

const versions: Record<string, string> = {};
for (const name of NATIVE) {
  versions[name] = (
    JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')) as { version: string }
  ).version;
}
const agentPackage = JSON.parse(readFileSync(join(agentDir, 'package.json'), 'utf8')) as { version: string };
writeFileSync(
  join(out, 'package.json'),
  `${JSON.stringify(
    {
      name: 'gatehouse-agent',
      version: agentPackage.version,
      private: true,
      type: 'module',
      bin: { 'gatehouse-agent': './gatehouse-agent.mjs' },
      engines: { node: '>=20' },
      dependencies: versions,
    },
    null,
    2,
  )}\n`,
);

for (const name of CARRIED) {
  const from = packageDir(name);
  cpSync(from, join(out, 'node_modules', name), {
    recursive: true,
    // Sources, docs and build scaffolding are not needed to run.
    filter: (path) =>
      !/\/(doc|docs|test|examples|deps|obj\.target|\.github)(\/|$)|\.(md|map|cc|h)$/.test(
        path.slice(from.length),
      ),
  });
}
for (const file of ['gatehouse-agent.service', 'install.sh']) {
  cpSync(join(agentDir, 'packaging', file), join(out, file));
}

const tarball = join(distDir, bundleFileName(architecture()));
execFileSync('tar', ['-czf', tarball, '-C', distDir, 'gatehouse-agent']);
process.stdout.write(`built ${out}\n      ${tarball}\n`);
