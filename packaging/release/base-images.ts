import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Podman } from './podman';
import type { Component } from './sbom';

/**
 * The public base images the Containerfiles start from. Where no registry can be reached (CI here), the release
 * assembles a stand-in for each under the same name from this machine's own files, so the same Containerfiles build:
 *
 * - `debian:bookworm-slim`: the C and C++ run-time libraries the agent's executable links to, from this Debian
 *   machine, and busybox (static) for a shell and the usual commands;
 * - `node:20-bookworm-slim`: that, plus this machine's Node.js and npm where the official image has them
 *   (/usr/local/bin/node, /usr/local/lib/node_modules/npm) and its `node` user (uid 1000).
 *
 * A stand-in carries the label `dev.gatehouse.stand-in`; one already present (or a real image of that name) is used
 * as it is, so later builds reuse it.
 */
export const BASE_IMAGES = {
  debian: 'docker.io/library/debian:bookworm-slim',
  node: 'docker.io/library/node:20-bookworm-slim',
} as const;

const LABEL = 'dev.gatehouse.stand-in';
/** Bumped whenever what a stand-in holds changes, so that a store keeping an older one makes it again. */
const RECIPE = '2';

/** Shared libraries a program loads, as `ldd` lists them (the loader included). */
export function sharedLibraries(program: string): string[] {
  const out = execFileSync('ldd', [program], { encoding: 'utf8' });
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    const match = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (match?.[1]) libs.add(match[1]);
  }
  return [...libs];
}

/** The Debian package that owns a file, with its version, for the stand-in's bill of materials. */
function debianOwner(file: string): Component | undefined {
  // dpkg knows a file by the path its package installed, which on a merged-/usr system may be under /usr.
  for (const candidate of [file, `/usr${file}`, realpathSync(file)]) {
    try {
      const owner = execFileSync('dpkg', ['-S', candidate], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .split(':')[0]
        ?.trim();
      if (!owner) continue;
      const version = execFileSync('dpkg-query', ['-W', `-f=\${Version}`, owner], {
        encoding: 'utf8',
      }).trim();
      return { type: 'library', name: owner, version, purl: `pkg:deb/debian/${owner}@${version}` };
    } catch {
      // not this path
    }
  }
  return undefined;
}

/** Copies a file into the root at the same path, following links to the file itself (libc.so.6 -> libc-2.36.so). */
export function copyFile(root: string, file: string, to: string = file): void {
  mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
  cpSync(file, path.join(root, to), { dereference: true });
}

/**
 * The libraries the stand-ins carry: all of libc6's (as Debian's image has them: the agent's native addons load
 * libutil, glibc's resolver its own modules), what the programs link to, and libcrypt, which the agent loads at
 * run time to check local passwords.
 */
function carriedLibraries(programs: string[]): string[] {
  const libs = new Set<string>();
  const libc = execFileSync('dpkg', ['-L', 'libc6'], { encoding: 'utf8' }).split('\n');
  for (const file of libc)
    if (/^\/lib\/[^/]+\/[^/]+\.so(\.\d+)*$/.test(file) && existsSync(file)) libs.add(file);
  for (const program of programs) for (const lib of sharedLibraries(program)) libs.add(lib);
  for (const lib of ['/lib/x86_64-linux-gnu/libcrypt.so.1']) if (existsSync(lib)) libs.add(lib);
  return [...libs];
}

/** The Debian packages a stand-in's files come from. */
function debianComponents(programs: string[]): Component[] {
  return [...carriedLibraries(programs), '/bin/busybox'].flatMap((file) => debianOwner(file) ?? []);
}

/** A stand-in's root: the libraries, busybox and its commands, the accounts and the release files. */
export function debianRoot(root: string, programs: string[]): void {
  for (const sub of ['bin', 'etc', 'root', 'tmp', 'var/tmp', 'usr/local/bin', 'home']) {
    mkdirSync(path.join(root, sub), { recursive: true });
  }
  chmodSync(path.join(root, 'tmp'), 0o1777);
  chmodSync(path.join(root, 'var/tmp'), 0o1777);
  // At the paths ldd names: the loader in /lib64, libraries in /lib/<triplet>.
  for (const lib of carriedLibraries(programs)) copyFile(root, lib);
  copyFile(root, '/bin/busybox', '/bin/busybox');
  const applets = execFileSync('/bin/busybox', ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const applet of applets) {
    if (applet !== 'busybox' && !existsSync(path.join(root, 'bin', applet))) {
      symlinkSync('busybox', path.join(root, 'bin', applet));
    }
  }
  mkdirSync(path.join(root, 'usr'), { recursive: true });
  symlinkSync('../bin', path.join(root, 'usr', 'bin'));
  symlinkSync('../bin', path.join(root, 'usr', 'sbin'));
  symlinkSync('bin', path.join(root, 'sbin'));
  writeFileSync(
    path.join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n',
  );
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  writeFileSync(path.join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n');
  chmodSync(path.join(root, 'etc/shadow'), 0o640);
  for (const file of ['/etc/os-release', '/etc/debian_version', '/etc/nsswitch.conf']) {
    if (existsSync(file)) copyFile(root, file);
  }
  if (existsSync('/etc/ssl/certs/ca-certificates.crt')) copyFile(root, '/etc/ssl/certs/ca-certificates.crt');
}

export async function importRoot(
  podman: Podman,
  root: string,
  name: string,
  changes: string[],
): Promise<void> {
  const tar = `${root}.tar`;
  execFileSync('tar', ['--numeric-owner', '-C', root, '-cf', tar, '.']);
  await podman('import', ...changes.flatMap((c) => ['--change', c]), tar, name);
}

export async function imageExists(podman: Podman, name: string): Promise<boolean> {
  return podman('image', 'exists', name).then(
    () => true,
    () => false,
  );
}

/**
 * Whether the store has an image of that name to build on: a real one, or a stand-in of this recipe. An older
 * stand-in is removed.
 */
async function usable(podman: Podman, name: string): Promise<boolean> {
  if (!(await imageExists(podman, name))) return false;
  const label = await podman('image', 'inspect', '--format', `{{index .Labels "${LABEL}"}}`, name);
  if (label === '' || label === '<no value>' || label.endsWith(`-${RECIPE}`)) return true;
  await podman('rmi', '--force', name);
  return false;
}

/** Assembles whichever of the two base images is missing. Answers what each stand-in holds. */
export async function ensureBaseImages(
  podman: Podman,
): Promise<Record<keyof typeof BASE_IMAGES, Component[]>> {
  const work = mkdtempSync(path.join(tmpdir(), 'gatehouse-base-'));
  try {
    const node = process.execPath;
    const nodeComponent: Component = {
      type: 'application',
      name: 'node',
      version: process.versions.node,
      license: 'MIT',
      purl: `pkg:generic/node@${process.versions.node}`,
    };
    const debianParts = debianComponents([node]);
    if (!(await usable(podman, BASE_IMAGES.debian))) {
      const root = path.join(work, 'debian');
      debianRoot(root, [node]);
      await importRoot(podman, root, BASE_IMAGES.debian, [
        `LABEL ${LABEL}=debian-bookworm-slim-from-this-machine-${RECIPE}`,
        'CMD ["/bin/sh"]',
      ]);
    }
    if (!(await usable(podman, BASE_IMAGES.node))) {
      const root = path.join(work, 'node');
      debianRoot(root, [node]);
      copyFile(root, node, '/usr/local/bin/node');
      const npmDir = path.join(path.dirname(path.dirname(node)), 'lib', 'node_modules', 'npm');
      cpSync(npmDir, path.join(root, 'usr/local/lib/node_modules/npm'), { recursive: true });
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(root, 'usr/local/bin/npm'));
      symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(root, 'usr/local/bin/npx'));
      const passwd = path.join(root, 'etc/passwd');
      writeFileSync(passwd, `${readFileSync(passwd, 'utf8')}node:x:1000:1000::/home/node:/bin/sh\n`);
      const group = path.join(root, 'etc/group');
      writeFileSync(group, `${readFileSync(group, 'utf8')}node:x:1000:\n`);
      mkdirSync(path.join(root, 'home/node'), { recursive: true });
      execFileSync('chown', ['1000:1000', path.join(root, 'home/node')]);
      await importRoot(podman, root, BASE_IMAGES.node, [
        `LABEL ${LABEL}=node-20-bookworm-slim-from-this-machine-${RECIPE}`,
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'CMD ["node"]',
      ]);
    }
    const npmVersion = (
      JSON.parse(
        readFileSync(
          path.join(path.dirname(path.dirname(node)), 'lib/node_modules/npm/package.json'),
          'utf8',
        ),
      ) as { version: string }
    ).version;
    return {
      debian: debianParts,
      node: [
        ...debianParts,
        nodeComponent,
        {
          type: 'application',
          name: 'npm',
          version: npmVersion,
          license: 'Artistic-2.0',
          purl: `pkg:npm/npm@${npmVersion}`,
        },
      ],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
