import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

/** What the lock file holds: who holds the store, so a second process can say so. */
export interface LockOwner {
  pid: number;
  /** The holder's start time as /proc gives it (clock ticks since boot), to tell a reused pid apart. */
  started: string | null;
  /** `serve` or the CLI command that holds it. */
  command: string;
  at: string;
}

/** A second process tried to open an embedded store that a live process holds. */
export class StoreBusy extends Error {
  constructor(
    readonly file: string,
    readonly owner: LockOwner,
  ) {
    super(
      `the embedded store in ${path.dirname(file)} is in use by process ${owner.pid} (gatehouse ${owner.command}, since ${owner.at}); ` +
        `the embedded database admits one process at a time. If no Gatehouse process is running, remove ${file}.`,
    );
  }
}

/** The start time of a process from /proc (Linux); null where /proc is not there. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 counts from after the command name, which may hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(owner: LockOwner): boolean {
  // Our own pid: this very process holds it (another kernel in it), unless the pid was reused after a kill -9
  // (a container's first process is always pid 1), which the start time tells.
  if (owner.pid === process.pid) return owner.started !== null && owner.started === startTime(process.pid);
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A live pid with another start time is a new process that reused the number (after a crash or a reboot).
  const now = startTime(owner.pid);
  return !(owner.started && now && owner.started !== now);
}

function readOwner(file: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

/**
 * An exclusive hold on the embedded store of a data directory: the file `gatehouse.lock`, created exclusively,
 * naming the holder. PGlite itself does not lock (electric-sql/pglite#1106), and two processes on one data
 * directory lose each other's writes. A lock left by a killed process is taken over once its pid is gone.
 */
export class StoreLock {
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(readonly file: string) {
    process.once('exit', this.onExit);
  }

  static file(dataDir: string): string {
    return path.join(dataDir, 'gatehouse.lock');
  }

  /** The live holder of the data directory's store, if any. */
  static holder(dataDir: string): LockOwner | undefined {
    const owner = readOwner(StoreLock.file(dataDir));
    return owner && alive(owner) ? owner : undefined;
  }

  /** Takes the lock or throws StoreBusy naming the live holder. */
  static acquire(dataDir: string, command: string): StoreLock {
    mkdirSync(dataDir, { recursive: true });
    const file = StoreLock.file(dataDir);
    const me: LockOwner = {
      pid: process.pid,
      started: startTime(process.pid),
      command,
      at: new Date().toISOString(),
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        try {
          writeSync(fd, `${JSON.stringify(me)}\n`);
        } finally {
          closeSync(fd);
        }
        return new StoreLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = readOwner(file);
      if (owner && alive(owner)) throw new StoreBusy(file, owner);
      if (!owner && Date.now() - mtime(file) < 2000) {
        // Being written by a process that created it a moment ago: look again.
        sleep(50);
        continue;
      }
      StoreLock.takeOver(file, owner);
    }
    const owner = readOwner(file);
    throw new StoreBusy(file, owner ?? { pid: 0, started: null, command: 'unknown', at: 'unknown' });
  }

  /** Removes a stale lock; a directory created exclusively makes two processes that both found it stale take turns. */
  private static takeOver(file: string, seen: LockOwner | undefined): void {
    const guard = `${file}.takeover`;
    try {
      mkdirSync(guard);
    } catch {
      if (Date.now() - mtime(guard) > 10_000) rmdirSync(guard, { recursive: true } as never);
      sleep(50);
      return;
    }
    try {
      const now = readOwner(file);
      if (JSON.stringify(now) === JSON.stringify(seen)) unlinkSync(file);
    } catch {
      // already gone
    } finally {
      rmdirSync(guard);
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onExit);
    if (readOwner(this.file)?.pid === process.pid) {
      try {
        unlinkSync(this.file);
      } catch {
        // gone already
      }
    }
  }
}

function mtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
