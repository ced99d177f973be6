import type { IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';

/** A client of GET /ws/ssh as the console's terminal is: JSON control frames, binary terminal bytes. */
export class WebTerminalClient {
  readonly ws: WebSocket;
  output = '';
  readonly controls: { type: string; message?: string; code?: number; nonce?: string; namespace?: string }[] =
    [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  /** The HTTP answer when the server refused the upgrade: its status, headers and body. */
  httpStatus: number | undefined;
  httpHeaders: IncomingHttpHeaders = {};
  httpBody = '';

  /** `from`: the loopback address to connect from (failed sign-ins earn penalties for their source). */
  constructor(url: string, from?: string) {
    this.ws = new WebSocket(url, from ? { localAddress: from } : {});
    this.ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary) this.output += data.toString('utf8');
      else this.controls.push(JSON.parse(data.toString('utf8')));
    });
    this.ws.on('unexpected-response', (_req, res) => {
      this.httpStatus = res.statusCode;
      this.httpHeaders = res.headers;
      res.on('data', (chunk: Buffer) => {
        this.httpBody += chunk.toString('utf8');
      });
      res.on('end', () => this.ws.terminate());
      res.on('error', () => this.ws.terminate());
    });
    this.ws.on('error', () => {});
    this.opened = new Promise((resolve) => this.ws.once('open', () => resolve()));
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  control(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  type(text: string): void {
    this.ws.send(Buffer.from(text), { binary: true });
  }

  async nextControl(type: string, timeoutMs = 15_000) {
    const started = Date.now();
    for (;;) {
      const found = this.controls.find((c) => c.type === type);
      if (found) return found;
      if (Date.now() - started > timeoutMs)
        throw new Error(`no ${type} frame; got ${JSON.stringify(this.controls)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<void> {
    const started = Date.now();
    while (!pattern.test(this.output)) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`never saw ${pattern}; saw ${JSON.stringify(this.output)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
