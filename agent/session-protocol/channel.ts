import { Duplex, Writable } from 'node:stream';
import type { SessionChannel } from '@gatehouse/protocol/channel-output';
import { controlMessage, dataMessages, Message, type MessageType } from '@gatehouse/protocol/session-wire';

/**
 * One session of the session protocol, on the agent, as the session code's SessionChannel: what the program reads
 * is the user's stdin, what it writes goes out as stdout and stderr messages, and `exit` sends its status. All of
 * it travels in order on the one tunnel stream, so the exit status always follows the last output byte.
 *
 * Back-pressure both ways: a write completes once the tunnel stream took it (which waits for the gateway's
 * window), and while the program does not read its input the tunnel stream is paused, so the gateway's window
 * closes and the user's client stops sending.
 */
export class ProtocolChannel extends Duplex implements SessionChannel {
  readonly stderr: Writable;

  constructor(private readonly stream: Duplex) {
    super({ allowHalfOpen: true, readableHighWaterMark: 256 * 1024, writableHighWaterMark: 256 * 1024 });
    this.stderr = new Writable({
      highWaterMark: 256 * 1024,
      write: (chunk: Buffer, _encoding, done) => this.send(Message.stderr, [chunk], done),
      writev: (chunks, done) =>
        this.send(
          Message.stderr,
          chunks.map((c) => c.chunk as Buffer),
          done,
        ),
    });
    // A write that fails because the gateway closed the session ends here: 'close' tells the program.
    this.stderr.on('error', () => {});
    this.on('error', () => {});
    stream.on('close', () => this.destroy());
  }

  /** Input from the user, as the stdin messages bring it. */
  input(data: Buffer): void {
    if (this.destroyed || this.readableEnded) return;
    if (!this.push(data)) this.stream.pause();
  }

  /** The user's EOF. */
  endInput(): void {
    if (!this.destroyed && !this.readableEnded) this.push(null);
  }

  override _read(): void {
    this.stream.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.send(Message.stdout, [chunk], done);
  }

  override _writev(
    chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>,
    done: (error?: Error | null) => void,
  ): void {
    this.send(
      Message.stdout,
      chunks.map((c) => c.chunk),
      done,
    );
  }

  exit(code: number): void;
  exit(signal: string, coreDumped: boolean, description: string): void;
  exit(codeOrSignal: number | string, coreDumped?: boolean, description?: string): void {
    const body =
      typeof codeOrSignal === 'number'
        ? { code: codeOrSignal }
        : { signal: codeOrSignal, core: coreDumped ?? false, description: description ?? '' };
    if (!this.stream.writableEnded) this.stream.write(controlMessage(Message.exit, body));
  }

  override _final(done: (error?: Error | null) => void): void {
    this.stream.end(done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    if (!this.stream.destroyed && !this.stream.writableFinished) this.stream.destroy();
    this.stderr.destroy();
    done(error);
  }

  /** Data messages, header and payload corked together so the tunnel stream frames them in one copy. */
  private send(type: MessageType, chunks: Buffer[], done: (error?: Error | null) => void): void {
    const { stream } = this;
    if (stream.destroyed || stream.writableEnded) {
      done(new Error('session closed'));
      return;
    }
    stream.cork();
    const parts = chunks.flatMap((chunk) => dataMessages(type, chunk));
    parts.forEach((part, i) => {
      if (i === parts.length - 1) stream.write(part, done);
      else stream.write(part);
    });
    stream.uncork();
    if (parts.length === 0) done();
  }
}
