/**
 * Builds the single-executable agent (node --import tsx agent/build-executable.ts [amd64|arm64] [--out DIR], after
 * agent/build.ts with the same --out; `npm run build -w agent`, and so `npm install`, runs both for this machine's
 * architecture): Node.js's single executable application, that is the Node.js binary of this machine's version
 * with the agent's install tree injected as an asset (agent/packaging/executable-main.ts unpacks and runs it). The
 * device needs no Node.js.
 *
 *   agent/dist/gatehouse-agent-linux-<arch>     the executable
 *
 * For this machine's architecture the binary is the running Node.js itself. For the other one it is Node.js of the
 * same version from the npm registry's `node-linux-<arch>` package, with the node-pty and koffi builds of that
 * architecture from their npm packages; ssh2's optional crypto binding is compiled at install time and exists only
 * for this machine, so that build uses ssh2's JavaScript crypto.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { architecture } from './identity';
import { agentDistDir, BUNDLE_ARCHITECTURES, executableFileName } from './packaging/bundle';
import { packRuntime, RUNTIME_ASSET, RUNTIME_DIGEST_ASSET, runtimeDigest } from './packaging/runtime-archive';

const agentDir = dirname(fileURLToPath(import.meta.url));
const repoDir = dirname(agentDir);
/** Node's name of each architecture we build for. */
const NODE_ARCH: Record<string, string> = { amd64: 'x64', arm64: 'arm64' };
/** The fuse Node.js's binary carries for postject (the Node.js documentation's "single executable applications"). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const { values, positionals } = parseArgs({
  options: { out: { type: 'string' } },
  allowPositionals: true,
  strict: true,
});
const distDir = values.out ? resolve(values.out) : agentDistDir;
const arch = positionals[0] ?? architecture();
if (!(BUNDLE_ARCHITECTURES as readonly string[]).includes(arch)) {
  throw new Error(`no executable build for ${arch}; one of ${BUNDLE_ARCHITECTURES.join(', ')}`);
}
const tree = join(distDir, 'gatehouse-agent');
if (!existsSync(join(tree, 'gatehouse-agent.mjs'))) throw new Error('run "npm run build -w agent" first');

const work = mkdtempSync(join(tmpdir(), 'gatehouse-agent-executable-'));
try {
  const hostArch = architecture();
  let nodeBinary = process.execPath;
  let runtime = tree;
  if (arch !== hostArch) {
    const nodeArch = NODE_ARCH[arch] as string;
    const hostNodeArch = NODE_ARCH[hostArch] as string;
    // Packages of the other architecture, by their ordinary npm names (the registry's tarballs, unpacked).
    const fetched = join(work, 'fetched');
    mkdirSync(fetched);
    // The versions the install tree was built with (its package.json pins them).
    const pinned = (
      JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    ).dependencies;
    const koffi = pinned['koffi'];
    const pty = pinned['@lydell/node-pty'];
    const specs = [
      `node-linux-${nodeArch}@${process.versions.node}`,
      `@lydell/node-pty-linux-${nodeArch}@${pty}`,
      `@koromix/koffi-linux-${nodeArch}@${koffi}`,
    ];
    execFileSync('npm', ['pack', '--silent', '--pack-destination', fetched, ...specs], {
      cwd: work,
      stdio: 'ignore',
    });
    const unpack = (prefix: string) => {
      const file = readdirSync(fetched).find((name) => name.startsWith(prefix));
      if (!file) throw new Error(`npm pack left no ${prefix}*.tgz`);
      const into = join(work, prefix);
      mkdirSync(into);
      execFileSync('tar', ['-xzf', join(fetched, file), '-C', into, '--strip-components=1']);
      return into;
    };
    nodeBinary = join(unpack(`node-linux-${nodeArch}-`), 'bin', 'node');
    runtime = join(work, 'runtime');
    cpSync(tree, runtime, { recursive: true });
    const modules = join(runtime, 'node_modules');
    rmSync(join(modules, '@lydell', `node-pty-linux-${hostNodeArch}`), { recursive: true });
    rmSync(join(modules, '@koromix', `koffi-linux-${hostNodeArch}`), { recursive: true });
    rmSync(join(modules, 'ssh2', 'lib', 'protocol', 'crypto', 'build'), { recursive: true, force: true });
    cpSync(
      unpack(`lydell-node-pty-linux-${nodeArch}-`),
      join(modules, '@lydell', `node-pty-linux-${nodeArch}`),
      {
        recursive: true,
      },
    );
    cpSync(unpack(`koromix-koffi-linux-${nodeArch}-`), join(modules, '@koromix', `koffi-linux-${nodeArch}`), {
      recursive: true,
    });
  }

  const blobFile = join(work, 'runtime.blob');
  const packed = packRuntime(runtime);
  writeFileSync(blobFile, packed);
  const digestFile = join(work, 'runtime.digest');
  writeFileSync(digestFile, runtimeDigest(packed));
  const mainFile = join(work, 'main.cjs');
  await build({
    entryPoints: [join(agentDir, 'packaging', 'executable-main.ts')],
    outfile: mainFile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    legalComments: 'none',
    logLevel: 'warning',
  });
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: mainFile,
      output: join(work, 'sea.blob'),
      disableExperimentalSEAWarning: true,
      assets: { [RUNTIME_ASSET]: blobFile, [RUNTIME_DIGEST_ASSET]: digestFile },
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'ignore' });
  const out = join(distDir, executableFileName(arch));
  rmSync(out, { force: true });
  cpSync(nodeBinary, out);
  chmodSync(out, 0o755);
  execFileSync(
    process.execPath,
    [
      join(repoDir, 'node_modules', 'postject', 'dist', 'cli.js'),
      out,
      'NODE_SEA_BLOB',
      join(work, 'sea.blob'),
      '--sentinel-fuse',
      SEA_FUSE,
    ],
    { stdio: 'ignore' },
  );
  process.stdout.write(`built ${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
