import { constants, type Dirent, type Stats } from 'node:fs';
import {
  chmod,
  type FileHandle,
  lstat,
  mkdir,
  open,
  opendir,
  readlink,
  realpath,
  rename,
  rmdir,
  stat,
  symlink,
  unlink,
  utimes,
} from 'node:fs/promises';
import { resolve } from 'node:path';
import ssh2, { type Attributes, type FileEntry, type SFTPWrapper } from 'ssh2';

const { STATUS_CODE, OPEN_MODE } = ssh2.utils.sftp;
const MAX_READ = 256 * 1024;

type OpenHandle =
  | { kind: 'file'; file: FileHandle }
  | { kind: 'directory'; path: string; listed: boolean; entries?: Dirent[] };

function statusFor(error: unknown): number {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return STATUS_CODE.NO_SUCH_FILE;
  if (code === 'EACCES' || code === 'EPERM') return STATUS_CODE.PERMISSION_DENIED;
  return STATUS_CODE.FAILURE;
}

function attributesOf(stats: Stats): Attributes {
  return {
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    size: stats.size,
    atime: Math.floor(stats.atimeMs / 1000),
    mtime: Math.floor(stats.mtimeMs / 1000),
  };
}

/** An `ls -l` style line; OpenSSH's `ls -l` prints it as given. */
function longName(name: string, stats: Stats): string {
  const types: Array<[number, string]> = [
    [constants.S_IFDIR, 'd'],
    [constants.S_IFLNK, 'l'],
  ];
  const type = types.find(([bits]) => (stats.mode & constants.S_IFMT) === bits)?.[1] ?? '-';
  let permissions = '';
  for (let shift = 6; shift >= 0; shift -= 3) {
    const bits = (stats.mode >> shift) & 7;
    permissions += `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${bits & 1 ? 'x' : '-'}`;
  }
  const date = stats.mtime.toISOString().slice(0, 16).replace('T', ' ');
  return `${type}${permissions} ${stats.nlink} ${stats.uid} ${stats.gid} ${stats.size} ${date} ${name}`;
}

function openFlags(flags: number): number {
  const read = (flags & OPEN_MODE.READ) !== 0;
  const write = (flags & OPEN_MODE.WRITE) !== 0;
  let mode = read && write ? constants.O_RDWR : write ? constants.O_WRONLY : constants.O_RDONLY;
  if (flags & OPEN_MODE.APPEND) mode |= constants.O_APPEND;
  if (flags & OPEN_MODE.CREAT) mode |= constants.O_CREAT;
  if (flags & OPEN_MODE.TRUNC) mode |= constants.O_TRUNC;
  if (flags & OPEN_MODE.EXCL) mode |= constants.O_EXCL;
  return mode;
}

/**
 * SFTP for devices without OpenSSH's sftp-server (minimal images, containers). It runs
 * inside the agent, with the agent's rights, so it is only offered when the session runs
 * as the agent's own user (single-user mode, or a root sign-in on a root agent).
 */
export function serveBuiltinSftp(sftp: SFTPWrapper, home: string): void {
  const handles = new Map<number, OpenHandle>();
  let nextHandle = 1;
  const pathOf = (path: string) => resolve(home, path || '.');
  const newHandle = (handle: OpenHandle): Buffer => {
    const id = nextHandle++;
    handles.set(id, handle);
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(id);
    return bytes;
  };
  const lookup = (bytes: Buffer): OpenHandle | undefined =>
    bytes.length === 4 ? handles.get(bytes.readUInt32BE(0)) : undefined;

  /** Runs a request; a thrown file-system error becomes the matching SFTP status. */
  const answer = (reqId: number, work: () => Promise<void>) => {
    work().catch((error: unknown) => sftp.status(reqId, statusFor(error), (error as Error).message));
  };
  const ok = (reqId: number) => sftp.status(reqId, STATUS_CODE.OK);

  sftp.on('OPEN', (reqId, filename, flags, attrs) =>
    answer(reqId, async () => {
      const file = await open(pathOf(filename), openFlags(flags), attrs.mode ?? 0o644);
      sftp.handle(reqId, newHandle({ kind: 'file', file }));
    }),
  );
  sftp.on('READ', (reqId, handle, offset, length) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (open?.kind !== 'file') return sftp.status(reqId, STATUS_CODE.FAILURE, 'not a file handle');
      const buffer = Buffer.alloc(Math.min(length, MAX_READ));
      const { bytesRead } = await open.file.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) sftp.status(reqId, STATUS_CODE.EOF);
      else sftp.data(reqId, buffer.subarray(0, bytesRead));
    }),
  );
  sftp.on('WRITE', (reqId, handle, offset, data) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (open?.kind !== 'file') return sftp.status(reqId, STATUS_CODE.FAILURE, 'not a file handle');
      await open.file.write(data, 0, data.length, offset);
      ok(reqId);
    }),
  );
  sftp.on('FSTAT', (reqId, handle) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (!open) return sftp.status(reqId, STATUS_CODE.FAILURE, 'unknown handle');
      sftp.attrs(reqId, attributesOf(open.kind === 'file' ? await open.file.stat() : await stat(open.path)));
    }),
  );
  sftp.on('FSETSTAT', (reqId, handle, attrs) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (open?.kind !== 'file') return sftp.status(reqId, STATUS_CODE.FAILURE, 'not a file handle');
      if (attrs.mode !== undefined) await open.file.chmod(attrs.mode & 0o7777);
      if (attrs.atime !== undefined && attrs.mtime !== undefined)
        await open.file.utimes(attrs.atime, attrs.mtime);
      ok(reqId);
    }),
  );
  sftp.on('CLOSE', (reqId, handle) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (!open) return sftp.status(reqId, STATUS_CODE.FAILURE, 'unknown handle');
      handles.delete(handle.readUInt32BE(0));
      if (open.kind === 'file') await open.file.close();
      ok(reqId);
    }),
  );
  sftp.on('OPENDIR', (reqId, path) =>
    answer(reqId, async () => {
      const full = pathOf(path);
      const directory = await opendir(full);
      await directory.close();
      sftp.handle(reqId, newHandle({ kind: 'directory', path: full, listed: false }));
    }),
  );
  sftp.on('READDIR', (reqId, handle) =>
    answer(reqId, async () => {
      const open = lookup(handle);
      if (open?.kind !== 'directory')
        return sftp.status(reqId, STATUS_CODE.FAILURE, 'not a directory handle');
      if (open.listed) return sftp.status(reqId, STATUS_CODE.EOF);
      open.listed = true;
      const names: FileEntry[] = [];
      const directory = await opendir(open.path);
      for await (const entry of directory) {
        const stats = await lstat(resolve(open.path, entry.name)).catch(() => undefined);
        if (stats)
          names.push({
            filename: entry.name,
            longname: longName(entry.name, stats),
            attrs: attributesOf(stats),
          });
      }
      sftp.name(reqId, names);
    }),
  );
  for (const [event, read] of [
    ['STAT', stat],
    ['LSTAT', lstat],
  ] as const) {
    sftp.on(event, (reqId: number, path: string) =>
      answer(reqId, async () => sftp.attrs(reqId, attributesOf(await read(pathOf(path))))),
    );
  }
  sftp.on('SETSTAT', (reqId, path, attrs) =>
    answer(reqId, async () => {
      if (attrs.mode !== undefined) await chmod(pathOf(path), attrs.mode & 0o7777);
      if (attrs.atime !== undefined && attrs.mtime !== undefined)
        await utimes(pathOf(path), attrs.atime, attrs.mtime);
      ok(reqId);
    }),
  );
  /** A request answered by a bare OK once its file-system call succeeds. */
  const done = (reqId: number, work: () => Promise<unknown>) =>
    answer(reqId, async () => {
      await work();
      ok(reqId);
    });
  sftp.on('REMOVE', (reqId, path) => done(reqId, () => unlink(pathOf(path))));
  sftp.on('RMDIR', (reqId, path) => done(reqId, () => rmdir(pathOf(path))));
  sftp.on('MKDIR', (reqId, path, attrs) =>
    done(reqId, () => mkdir(pathOf(path), { mode: attrs.mode ?? 0o755 })),
  );
  sftp.on('RENAME', (reqId, from, to) => done(reqId, () => rename(pathOf(from), pathOf(to))));
  sftp.on('SYMLINK', (reqId, target, link) => done(reqId, () => symlink(target, pathOf(link))));
  sftp.on('READLINK', (reqId, path) =>
    answer(reqId, async () => {
      const target = await readlink(pathOf(path));
      sftp.name(reqId, [{ filename: target, longname: target, attrs: {} as Attributes }]);
    }),
  );
  sftp.on('REALPATH', (reqId, path) =>
    answer(reqId, async () => {
      // A path that does not exist yet (an upload target) still has a canonical name.
      const full = await realpath(pathOf(path)).catch(() => pathOf(path));
      sftp.name(reqId, [{ filename: full, longname: full, attrs: {} as Attributes }]);
    }),
  );
  sftp.on('EXTENDED', (reqId) => sftp.status(reqId, STATUS_CODE.OP_UNSUPPORTED));
  // The client ends its side when it is done; ending ours lets the channel close.
  sftp.on('end', () => sftp.end());
  // A malformed packet is a fatal SFTP error: ssh2 ends the channel, and an unheard 'error' would end the agent.
  sftp.on('error', () => sftp.end());
  sftp.on('close', () => {
    for (const open of handles.values()) if (open.kind === 'file') void open.file.close();
    handles.clear();
  });
}
