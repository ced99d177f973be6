import { once } from 'node:events';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { PassThrough } from 'node:stream';
import { ChannelOutput, type SessionChannel } from '@gatehouse/protocol/channel-output';
import { expect } from 'chai';
import ssh2 from 'ssh2';

/**
 * ChannelOutput against ssh2 itself (server and client on loopback): the pattern that made ssh2 resend stale stdout
 * and stall stderr. stdout waits for the window once and completes; stderr then waits too; every byte must arrive
 * once, on its own stream, and the exit status after them.
 */
describe('ChannelOutput on a real ssh2 channel', function () {
  this.timeout(20_000);
  let listener: Server;
  let port: number;
  // Both larger than ssh2's 2 MiB channel window plus what its client buffers, so each must wait for the window.
  const OUT = 6_000_000;
  const ERR = 5_000_000;

  before(async () => {
    // ssh2's generator makes a key its own parser refuses about once in 256 keys: take the next one then.
    let hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;
    while (ssh2.utils.parseKey(hostKey) instanceof Error)
      hostKey = ssh2.utils.generateKeyPairSync('ed25519').private;
    const server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
      client.on('authentication', (ctx) => ctx.accept());
      client.on('error', () => {});
      client.on('session', (accept) => {
        accept().on('exec', (acceptExec) => {
          const channel = acceptExec();
          const output = new ChannelOutput(channel, []);
          output.push(false, Buffer.alloc(OUT, 'o'));
          // The second stream is written only once the first has waited for the window and gone out.
          void output
            .drained()
            .then(() => {
              output.push(true, Buffer.alloc(ERR, 'e'));
              return output.drained();
            })
            .then(() => {
              channel.exit(0);
              channel.end();
            });
        });
      });
    });
    listener = createServer((socket) => server.injectSocket(socket));
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    port = (listener.address() as AddressInfo).port;
  });
  after(() => listener.close());

  it('delivers stdout then stderr once each when both waited for the window', async () => {
    const client = new ssh2.Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({ host: '127.0.0.1', port, username: 'u', password: 'p' });
    });
    try {
      const got = await new Promise<{ out: string; err: string; code: number | undefined }>(
        (resolve, reject) => {
          client.exec('anything', (error, channel) => {
            if (error) return reject(error);
            const out: Buffer[] = [];
            const err: Buffer[] = [];
            let code: number | undefined;
            // Stop reading so the 2 MiB window runs out under stdout, then again under stderr.
            const hold = (ms: number) => {
              channel.pause();
              channel.stderr.pause();
              setTimeout(() => {
                channel.resume();
                channel.stderr.resume();
              }, ms);
            };
            hold(200);
            let outBytes = 0;
            channel.on('data', (chunk: Buffer) => {
              out.push(chunk);
              outBytes += chunk.length;
              // All of stdout is in: hold again, so that stderr runs out of window too.
              if (outBytes === OUT) hold(300);
            });
            channel.stderr.on('data', (chunk: Buffer) => err.push(chunk));
            channel.on('exit', (status: number) => {
              code = status;
            });
            channel.on('close', () =>
              resolve({ out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString(), code }),
            );
          });
        },
      );
      expect(got.code).to.equal(0);
      expect(got.out.length).to.equal(OUT);
      expect(/^o+$/.test(got.out)).to.equal(true);
      expect(got.err.length).to.equal(ERR);
      expect(/^e+$/.test(got.err)).to.equal(true);
    } finally {
      client.end();
    }
  });
});

describe('ChannelOutput holds', () => {
  /** A channel whose writes complete only when the test says so, as a peer whose window is closed. */
  function slowChannel() {
    const pending: Array<() => void> = [];
    const stderr = new PassThrough();
    const channel = Object.assign(new PassThrough(), { stderr, exit: () => {} });
    channel.write = ((_chunk: Buffer, done: () => void) => {
      pending.push(done);
      return true;
    }) as typeof channel.write;
    const complete = () => {
      while (pending.length) pending.shift()?.();
    };
    return { channel: channel as unknown as SessionChannel, complete };
  }

  it('keeps the sources paused while held, whatever the channel says, and resumes them once both allow', () => {
    const { channel, complete } = slowChannel();
    const source = new PassThrough();
    source.on('data', () => {});
    const output = new ChannelOutput(channel, [source]);
    expect(source.isPaused()).to.equal(false);
    const release = output.hold();
    expect(source.isPaused()).to.equal(true);
    // The channel takes everything: its own backpressure would resume the sources, the hold does not let it.
    output.push(false, Buffer.alloc(3 * 1024 * 1024));
    complete();
    expect(source.isPaused()).to.equal(true);
    release();
    expect(source.isPaused()).to.equal(false);
    // Released twice: no effect on a second hold.
    const second = output.hold();
    release();
    expect(source.isPaused()).to.equal(true);
    // Too much queued for the channel: still paused after the hold goes, until the channel takes it.
    output.push(false, Buffer.alloc(3 * 1024 * 1024));
    second();
    expect(source.isPaused()).to.equal(true);
    complete();
    expect(source.isPaused()).to.equal(false);
  });
});
