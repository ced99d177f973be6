import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { agentDebName } from '../../packaging/release/agent-artifacts';
import { agentImageFile, serverImageFile } from '../../packaging/release/images';
import { serverPackageName } from '../../packaging/release/npm-package';
import { artifact, release, version } from './release';

interface Bom {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  metadata: { component: { name: string; version: string; hashes: { alg: string; content: string }[] } };
  components: { type: string; name: string; version: string; purl?: string }[];
}

/** What `npm run release` leaves: every artifact, each with its checksum file and its bill of materials. */
describe('the release folder', function () {
  this.timeout(120_000);
  const artifacts = [
    serverPackageName(version),
    serverImageFile(version),
    'gatehouse-agent-linux-amd64',
    'gatehouse-agent-linux-arm64',
    agentImageFile(version),
    agentDebName('amd64'),
    agentDebName('arm64'),
  ];

  it('holds every artifact of this version with a checksum file that sha256sum -c accepts', () => {
    const listed = JSON.parse(readFileSync(artifact('release.json'), 'utf8')) as {
      version: string;
      artifacts: { name: string; bytes: number }[];
    };
    expect(listed.version).to.equal(version);
    expect(listed.artifacts.map((a) => a.name).sort()).to.deep.equal([...artifacts].sort());
    // One pass over the files (they are 1 GiB together): SHA256SUMS, which each `<file>.sha256` repeats.
    const sums = execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: release, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(sums.sort()).to.deep.equal(artifacts.map((name) => `${name}: OK`).sort());
    const listedSums = readFileSync(artifact('SHA256SUMS'), 'utf8');
    for (const name of artifacts) {
      expect(listedSums.split('\n'), name).to.include(
        readFileSync(artifact(`${name}.sha256`), 'utf8').trim(),
      );
    }
    // Nothing else lies in the folder.
    const expected = new Set([
      ...artifacts.flatMap((n) => [n, `${n}.sha256`, `${n}.cdx.json`]),
      'SHA256SUMS',
      'release.json',
    ]);
    expect(readdirSync(release).filter((f) => !expected.has(f))).to.deep.equal([]);
  });

  it('describes each artifact in a CycloneDX bill of materials naming its version, digest and parts', () => {
    for (const name of artifacts) {
      const bom = JSON.parse(readFileSync(artifact(`${name}.cdx.json`), 'utf8')) as Bom;
      expect(bom.bomFormat, name).to.equal('CycloneDX');
      expect(bom.specVersion).to.equal('1.5');
      expect(bom.serialNumber).to.match(/^urn:uuid:[0-9a-f-]{36}$/);
      expect(bom.metadata.component.version).to.equal(version);
      const digest = readFileSync(artifact(`${name}.sha256`), 'utf8').split(' ')[0];
      expect(bom.metadata.component.hashes).to.deep.equal([{ alg: 'SHA-256', content: digest }]);
      const parts = new Map(bom.components.map((c) => [c.name, c]));
      // Every artifact carries the agent's or the server's SSH library, at the version installed here.
      const ssh2 = JSON.parse(readFileSync('node_modules/ssh2/package.json', 'utf8')) as { version: string };
      expect(parts.get('ssh2')?.purl, name).to.equal(`pkg:npm/ssh2@${ssh2.version}`);
      for (const c of bom.components)
        expect(c.version, `${name}: ${c.name}`).to.be.a('string').and.not.equal('');
    }
    const server = JSON.parse(
      readFileSync(artifact(`${serverPackageName(version)}.cdx.json`), 'utf8'),
    ) as Bom;
    const names = new Set(server.components.map((c) => c.name));
    for (const dep of ['koa', 'knex', '@electric-sql/pglite', 'tsx', '@gatehouse/core'])
      expect(names, dep).to.include(dep);
    // Build tools and test tools are not parts of the server.
    for (const dev of ['mocha', 'vite', '@docusaurus/core', 'typescript'])
      expect(names, dev).to.not.include(dev);
    const image = JSON.parse(readFileSync(artifact(`${serverImageFile(version)}.cdx.json`), 'utf8')) as Bom;
    const imageParts = new Map(image.components.map((c) => [c.name, c]));
    expect(imageParts.get('node')?.version).to.equal(process.versions.node);
    expect(imageParts.get('libc6')?.purl).to.match(/^pkg:deb\/debian\/libc6@/);
  });

  it('gives every artifact the same version: the package, the Debian control file and the executable', () => {
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', serverPackageName(version), 'package/package.json'], {
        cwd: release,
        encoding: 'utf8',
      }),
    ) as { name: string; version: string };
    expect(manifest).to.include({ name: 'gatehouse', version });
    expect(
      execFileSync('dpkg-deb', ['-f', agentDebName('amd64'), 'Version'], {
        cwd: release,
        encoding: 'utf8',
      }).trim(),
    ).to.equal(version);
    const runtime = mkdtempSync(path.join(tmpdir(), 'gatehouse-runtime-'));
    try {
      // No Node.js on that PATH: the executable runs on its own.
      expect(
        execFileSync(artifact('gatehouse-agent-linux-amd64'), ['--version'], {
          env: { PATH: '/usr/sbin:/sbin', GATEHOUSE_AGENT_RUNTIME_DIR: runtime },
          encoding: 'utf8',
        }).trim(),
      ).to.equal(version);
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  });

  it('builds the arm64 executable with arm64 native modules, and it starts under QEMU', function () {
    if (!existsSync('/usr/bin/qemu-aarch64-static')) this.skip(); // scripts/test-tools.mjs installs it
    const file = artifact('gatehouse-agent-linux-arm64');
    // ELF, 64-bit, machine 183 (AArch64).
    const header = readFileSync(file).subarray(0, 20);
    expect(header.subarray(0, 4).toString('latin1')).to.equal('\x7fELF');
    expect(header.readUInt16LE(18)).to.equal(183);
    const runtime = mkdtempSync(path.join(tmpdir(), 'gatehouse-runtime-'));
    try {
      const out = execFileSync(
        '/usr/bin/qemu-aarch64-static',
        ['-L', '/usr/aarch64-linux-gnu', file, '--version'],
        {
          env: { PATH: '/usr/sbin:/sbin', GATEHOUSE_AGENT_RUNTIME_DIR: runtime },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(out.trim()).to.equal(version);
      // What it unpacked and loaded to get there: node-pty and koffi built for arm64.
      const pty = execFileSync('find', [runtime, '-name', 'pty.node'], { encoding: 'utf8' }).trim();
      expect(pty).to.include('node-pty-linux-arm64');
      expect(readFileSync(pty).readUInt16LE(18)).to.equal(183);
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});
