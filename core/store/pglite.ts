import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** The part of Emscripten's NODEFS stream this module touches: `nfd` is the real file descriptor. */
interface NodeStream {
  nfd?: number;
}

/**
 * PGlite's NodeFS writes every page straight to a real file (so a `kill -9` loses nothing the OS has), but it starts
 * PostgreSQL with `fsync` off and its `fsync` hook is missing, so an OS crash or a power cut can lose committed
 * transactions or tear the WAL (electric-sql/pglite#1107). This file system adds the hook: PostgreSQL's own `fsync`
 * calls (the WAL at every commit, data files at checkpoints, directories after renames) reach the disk.
 */
export class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const preRun = [
      ...((emscriptenOpts.preRun as ((mod: never) => void)[] | undefined) ?? []),
      (mod: { NODEFS: { stream_ops: Record<string, unknown> } }) => {
        mod.NODEFS.stream_ops.fsync = (stream: NodeStream) => {
          if (stream.nfd !== undefined) fs.fsyncSync(stream.nfd);
          return 0;
        };
      },
    ];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } as typeof emscriptenOpts };
  }
}

/**
 * PGlite's start parameters without `-F` (fsync off), and the WAL synced with `fsync`: its `fdatasync` is a no-op
 * in PGlite's WebAssembly build, its `fsync` reaches the hook above.
 */
export const durableStartParams = [
  ...PGlite.defaultStartParams.filter((p) => p !== '-F'),
  '-c',
  'fsync=on',
  '-c',
  'wal_sync_method=fsync',
];
