import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type InstalledPackage, readManifest, runtimeClosure } from './dependencies';
import { extraRuntimeRoots, productVersion, repoRoot, serverTree, workspaceLinks } from './layout';
import { type Component, describeArtifact, npmComponent } from './sbom';

/** `gatehouse-<version>.tgz`, what `npm install -g` takes. */
export function serverPackageName(version: string = productVersion): string {
  return `gatehouse-${version}.tgz`;
}

/** Test files, editor and build left-overs never go into the package. */
const LEFT_OUT = /(^|\/)(test|tests|__tests__|\.github|\.cache|\.vite)(\/|$)|\.(map|tsbuildinfo)$/;

function copyInto(stage: string, relative: string, filter?: (relativeFile: string) => boolean): void {
  const from = path.join(repoRoot, relative);
  if (!existsSync(from))
    throw new Error(`${relative} is missing: build it first (npm run release builds it)`);
  cpSync(from, path.join(stage, relative), {
    recursive: true,
    filter: (file) => {
      const rel = path.relative(repoRoot, file);
      return !LEFT_OUT.test(path.relative(from, file)) && (!filter || filter(rel));
    },
  });
}

/**
 * The server as an npm package: the sources the server runs (through tsx), the built console and docs, the agent's
 * builds it hands out, and every run-time dependency bundled, so that `npm install -g ./gatehouse-<version>.tgz`
 * needs nothing but Node.js (no registry, no compiler). Native parts (ssh2's crypto binding, esbuild for tsx) are
 * this machine's: the package is for Linux on x86_64, and says so to npm.
 */
export async function buildServerPackage(
  outDir: string,
  agentBuild: string,
): Promise<{ file: string; packages: InstalledPackage[] }> {
  const stage = mkdtempSync(path.join(tmpdir(), 'gatehouse-package-'));
  try {
    for (const folder of serverTree.folders) {
      copyInto(stage, folder, (rel) => rel !== 'agent/dist' && !rel.startsWith('agent/dist/'));
    }
    // The agent builds the server hands out: the release's own (agent/dist is the checkout's, for its own server).
    cpSync(agentBuild, path.join(stage, 'agent', 'dist'), {
      recursive: true,
      filter: (file) => !path.basename(file).startsWith('.'),
    });
    for (const plugin of serverTree.plugins) {
      copyInto(
        stage,
        plugin,
        (rel) => !rel.startsWith(`${plugin}/web/`) || rel.startsWith(`${plugin}/web/dist`),
      );
    }
    copyInto(stage, serverTree.consoleDist);
    copyInto(stage, serverTree.docsBuild);
    for (const file of [...serverTree.docsServer, ...serverTree.files]) copyInto(stage, file);
    cpSync(
      path.join(repoRoot, 'packaging/release/link-workspaces.mjs'),
      path.join(stage, 'bin/link-workspaces.mjs'),
    );
    cpSync(path.join(repoRoot, 'packaging/release/docs-bin.mjs'), path.join(stage, 'bin/gatehouse-docs.js'));
    chmodSync(path.join(stage, 'bin/gatehouse-docs.js'), 0o755);

    const workspaces = Object.values(workspaceLinks);
    const packages = runtimeClosure(repoRoot, workspaces, extraRuntimeRoots);
    for (const pkg of packages) {
      cpSync(pkg.dir, path.join(stage, pkg.relative), {
        recursive: true,
        // Nested node_modules are packages of their own in the closure.
        filter: (file) => !path.relative(pkg.dir, file).split(path.sep).includes('node_modules'),
      });
    }
    for (const pkg of packages) settleBuilt(path.join(stage, pkg.relative));
    // npm keeps a bundled dependency only when it is also a dependency: the top-level ones are.
    const direct = packages.filter(
      (pkg) => !pkg.relative.slice('node_modules/'.length).includes('node_modules/'),
    );
    const root = readManifest(repoRoot) as ReturnType<typeof readManifest> & { description?: string };
    const manifest = {
      name: 'gatehouse',
      version: productVersion,
      description: root.description,
      type: 'module',
      license: 'Apache-2.0',
      engines: { node: '>=20.19' },
      os: ['linux'],
      cpu: ['x64'],
      bin: { gatehouse: 'bin/gatehouse.js', 'gatehouse-docs': 'bin/gatehouse-docs.js' },
      scripts: { postinstall: 'node bin/link-workspaces.mjs' },
      workspaceLinks,
      dependencies: Object.fromEntries(direct.map((pkg) => [pkg.name, pkg.version])),
      bundleDependencies: direct.map((pkg) => pkg.name),
    };
    writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

    mkdirSync(outDir, { recursive: true });
    const file = path.join(outDir, serverPackageName());
    // An npm package is a gzip'd tar whose one top folder is `package/`.
    execFileSync('tar', [
      '-czf',
      file,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--sort=name',
      '--transform',
      's,^\\.,package,',
      '-C',
      stage,
      '.',
    ]);
    await describeArtifact(
      file,
      {
        name: 'gatehouse',
        description: 'Gatehouse server (npm package; Linux x86_64, Node.js 20.19 or newer)',
      },
      serverComponents(packages),
    );
    return { file, packages };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * A bundled package arrives built (ssh2's crypto binding, cpu-features): npm must not run its install scripts, nor
 * its implicit `node-gyp rebuild` (a `binding.gyp` with no install script), on a machine that has no compiler.
 */
function settleBuilt(dir: string): void {
  const file = path.join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
    scripts?: Record<string, string>;
    gypfile?: boolean;
  };
  const scripts = manifest.scripts ?? {};
  const lifecycle = ['preinstall', 'install', 'postinstall'].filter((name) => name in scripts);
  if (lifecycle.length === 0 && !existsSync(path.join(dir, 'binding.gyp'))) return;
  for (const name of lifecycle) delete scripts[name];
  manifest.gypfile = false;
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The server's own parts and the npm packages it bundles. */
export function serverComponents(packages: InstalledPackage[]): Component[] {
  return [
    ...Object.keys(workspaceLinks).map((name) =>
      npmComponent({ name, version: productVersion, license: 'Apache-2.0' }),
    ),
    ...packages.map(npmComponent),
  ];
}
