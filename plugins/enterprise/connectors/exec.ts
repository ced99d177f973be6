import type { Duplex } from 'node:stream';
import { PassThrough, type Readable, Writable } from 'node:stream';
import type { LocalAccount } from '@gatehouse/protocol/accounts';
import type Docker from 'dockerode';
import { ENGINE_TIMEOUT_MS, resizeExec } from './engine';

/** What to run in the container, as whom, and with which terminal. */
export interface ExecRequest {
  /** The program and its arguments. */
  argv: string[];
  account: LocalAccount;
  env: Record<string, string>;
  /** A terminal of this size, or none. */
  tty?: { cols: number; rows: number };
}

/** How an exec ended (containers have no signals to report: the engine gives an exit code). */
export type ExecExit = { code: number };

/** Docker's stream header: 8 bytes, the stream (1 stdout, 2 stderr) then a big-endian length. */
const HEADER = 8;
/** A frame longer than this is not the engine's framing: the stream is broken. */
const MAX_FRAME = 16 * 1024 * 1024;

/**
 * One interactive exec in a container through the engine API: a hijacked HTTP connection carries stdin one way and
 * the output the other, raw with a TTY and in Docker's 8-byte-header frames without one. Output flows with
 * back-pressure (a paused stdout pauses the connection, and so the process). The exit code comes from inspecting
 * the exec once the connection ends, before `onClose`.
 *
 * Signals are not passed on: the engine API has no call to signal an exec (a TTY's ^C still reaches the process
 * as a character, as on any terminal).
 */
export class ContainerExec {
  readonly stdin: Writable;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private readonly exits: ((exit: ExecExit) => void)[] = [];
  private readonly closes: (() => void)[] = [];
  private closed = false;
  /** The last resize asked for; it settles once the engine answered, well or not. */
  private resized: Promise<void> = Promise.resolve();

  private constructor(
    private readonly exec: Docker.Exec,
    private readonly socket: Duplex,
    tty: boolean,
  ) {
    this.stdin = new Writable({
      // Input waits for a resize asked for before it, so a program started right after a window change (a user
      // resizes, then runs vim) reads the new size: the resize is an API call, the input a byte stream.
      write: (chunk: Buffer, _encoding, callback) => {
        this.resized.then(() => {
          if (socket.destroyed) return callback();
          socket.write(chunk, () => callback());
        });
      },
      // The user's end of input half-closes the connection: the process reads EOF and may still write.
      final: (callback) => {
        if (!socket.destroyed) socket.end();
        callback();
      },
    });
    // Writes after the process ended are dropped, not errors.
    this.stdin.on('error', () => undefined);
    if (tty) socket.pipe(this.stdout, { end: false });
    else demux(socket, this.stdout, this.stderr);
    socket.on('error', () => socket.destroy());
    // The engine ends its side when the process has exited: nothing more is read from the user then. Through a
    // connector's tunnel the stream stays half open until this side ends too.
    socket.once('end', () => socket.end());
    socket.once('close', () => {
      this.finish().catch(() => this.end());
    });
  }

  /** Creates and starts the exec; rejects when the engine refuses (no such container, user or program). */
  static async start(docker: Docker, containerId: string, request: ExecRequest): Promise<ContainerExec> {
    const tty = request.tty !== undefined;
    const env = {
      HOME: request.account.home,
      USER: request.account.name,
      LOGNAME: request.account.name,
      SHELL: request.account.shell,
      ...request.env,
    };
    const exec = await docker.getContainer(containerId).exec({
      Cmd: request.argv,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: tty,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      User: `${request.account.uid}:${request.account.gid}`,
      WorkingDir: request.account.home,
      abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
    } as Docker.ExecCreateOptions);
    const socket = (await exec.start({ hijack: true, stdin: true, Tty: tty })) as Duplex;
    const session = new ContainerExec(exec, socket, tty);
    if (request.tty) session.resize(request.tty);
    return session;
  }

  resize(size: { cols: number; rows: number }): void {
    if (this.closed) return;
    // A resize the engine refuses (the exec just ended) changes nothing worth telling the user.
    this.resized = this.resized
      .then(() => resizeExec(this.exec, size.rows, size.cols))
      .catch(() => undefined);
  }

  signal(_name: string): void {}

  onExit(listener: (exit: ExecExit) => void): void {
    this.exits.push(listener);
  }

  onClose(listener: () => void): void {
    this.closes.push(listener);
  }

  close(): void {
    this.socket.destroy();
  }

  /** The connection ended: read the exit code (the engine may take a moment to record it), then close. */
  private async finish(): Promise<void> {
    let code: number | null = null;
    const deadline = Date.now() + ENGINE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const state = await this.exec.inspect({
        abortSignal: AbortSignal.timeout(ENGINE_TIMEOUT_MS),
      } as object);
      if (!state.Running && typeof state.ExitCode === 'number') {
        code = state.ExitCode;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (code !== null) for (const listener of this.exits.splice(0)) listener({ code });
    this.end();
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    this.stdout.end();
    this.stderr.end();
    for (const listener of this.closes.splice(0)) listener();
  }
}

/**
 * Splits Docker's multiplexed stream into stdout and stderr, holding the connection while either is full.
 * Anything that is not a frame ends the stream (it would otherwise be taken for output).
 */
function demux(source: Readable, stdout: PassThrough, stderr: PassThrough): void {
  let pending: Buffer = Buffer.alloc(0);
  const waitFor = (target: PassThrough) => {
    source.pause();
    target.once('drain', () => source.resume());
  };
  source.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= HEADER) {
      const stream = pending[0];
      const size = pending.readUInt32BE(4);
      if ((stream !== 0 && stream !== 1 && stream !== 2) || size > MAX_FRAME) {
        source.destroy(new Error('the engine sent something that is not a stream frame'));
        return;
      }
      if (pending.length < HEADER + size) break;
      const payload = pending.subarray(HEADER, HEADER + size);
      pending = pending.subarray(HEADER + size);
      const target = stream === 2 ? stderr : stdout;
      if (!target.write(payload)) waitFor(target);
    }
  });
}

/** Reads one file of the container through the engine's archive call (a tar of it), at most `limit` bytes. */
export async function readContainerFile(
  docker: Docker,
  containerId: string,
  path: string,
  limit = 1024 * 1024,
): Promise<string | undefined> {
  let archive: NodeJS.ReadableStream;
  try {
    archive = await docker.getContainer(containerId).getArchive({ path });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of archive as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    total += chunk.length;
    if (total > limit + 1024) {
      (archive as Readable).destroy?.();
      return undefined;
    }
  }
  const tar = Buffer.concat(chunks);
  // A ustar header: type '0' (or NUL) is a regular file; its size is octal at 124.
  const type = tar[156];
  if (tar.length < 512 || (type !== 0x30 && type !== 0)) return undefined;
  const size = Number.parseInt(tar.subarray(124, 136).toString('latin1').replace(/\0/g, '').trim(), 8);
  if (!Number.isFinite(size) || size > limit || tar.length < 512 + size) return undefined;
  return tar.subarray(512, 512 + size).toString('utf8');
}
