import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/**
 * The agent's install tree (the bundle, ssh2, node-pty and koffi with their native `.node` files) as one blob that
 * the single executable carries and unpacks once before it loads the bundle. Node cannot load a native addon from
 * memory, so the addons must become files; the bundle goes with them so that it finds them as it does in the
 * tarball. Layout: `GHRT1\n`, a u32 (big-endian) length, a JSON list of `{ path, mode, size }`, then the files'
 * bytes in that order.
 */
const MAGIC = Buffer.from('GHRT1\n');

/** The asset names under which the executable's build stores the packed tree, and its digest (runtimeDigest). */
export const RUNTIME_ASSET = 'runtime';
export const RUNTIME_DIGEST_ASSET = 'runtime-digest';

interface Entry {
  path: string;
  mode: number;
  size: number;
}

/** Packs every regular file under `dir` (symbolic links are refused: the tree is copied, never linked). */
export function packRuntime(dir: string): Buffer {
  const entries: Entry[] = [];
  const bodies: Buffer[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) {
        const body = readFileSync(path);
        entries.push({
          path: relative(dir, path).split(sep).join('/'),
          mode: stat.mode & 0o777,
          size: body.length,
        });
        bodies.push(body);
      } else throw new Error(`${path}: only files and folders can go into the agent's runtime`);
    }
  };
  walk(dir);
  const header = Buffer.from(JSON.stringify(entries));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  return Buffer.concat([MAGIC, length, header, ...bodies]);
}

/** What names a packed tree's folder (with the version): two builds never share one. */
export function runtimeDigest(blob: Uint8Array): string {
  return createHash('sha256').update(blob).digest('hex').slice(0, 16);
}

const COMPLETE = '.complete';

/**
 * Unpacks the blob into `folder` unless a complete copy is there already. It is written beside the folder and
 * renamed into place, so a crash or a second agent starting at the same time never leaves a half-written tree that
 * the next start would load.
 */
export function unpackRuntime(blob: () => Uint8Array, folder: string): void {
  if (existsSync(join(folder, COMPLETE))) return;
  const raw = blob();
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('the agent runtime blob is damaged');
  const headerLength = bytes.readUInt32BE(MAGIC.length);
  let offset = MAGIC.length + 4;
  const entries = JSON.parse(bytes.subarray(offset, offset + headerLength).toString('utf8')) as Entry[];
  offset += headerLength;
  const staging = `${folder}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  for (const entry of entries) {
    if (entry.path.split('/').some((part) => part === '..' || part === '') || entry.path.startsWith('/')) {
      throw new Error(`the agent runtime blob names a path outside its folder: ${entry.path}`);
    }
    const target = join(staging, entry.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, bytes.subarray(offset, offset + entry.size));
    chmodSync(target, entry.mode);
    offset += entry.size;
  }
  writeFileSync(join(staging, COMPLETE), '');
  mkdirSync(dirname(folder), { recursive: true, mode: 0o700 });
  try {
    renameSync(staging, folder);
  } catch (error) {
    // Another agent finished first: its copy is as good as ours.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(folder, COMPLETE))) throw error;
  }
}
