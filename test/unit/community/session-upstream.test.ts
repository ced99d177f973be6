import { PassThrough } from 'node:stream';
import { controlMessage, dataMessages, Message } from '@gatehouse/protocol/session-wire';
import { expect } from 'chai';
import { ProtocolSession } from '../../../plugins/community/gateway/session-upstream';

describe('community: a session of the session protocol on the gateway', () => {
  it('keeps the device paused while stdout is full, however much stderr comes with it', async () => {
    // The device's stream, as the tunnel hands it over: what is written here is what the agent sent.
    const stream = new PassThrough();
    const session = new ProtocolSession(stream, 5000);
    stream.write(controlMessage(Message.opened));
    await session.opened;
    // Nobody reads: a user or browser that does not read, or a recording behind the store, holds both outputs.
    session.stdout.pause();
    session.stderr.pause();
    // A device that sends a byte of stderr with each 64 KiB of stdout, in one piece each time.
    for (let round = 0; round < 200; round++) {
      stream.write(
        Buffer.concat([
          ...dataMessages(Message.stdout, Buffer.alloc(64 * 1024, 'x')),
          ...dataMessages(Message.stderr, Buffer.from('#')),
        ]),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    // 12.5 MiB sent: stdout took what it holds and a piece more, the rest waits in the device's stream.
    expect(session.stdout.readableLength).to.be.below(512 * 1024);
    expect(stream.isPaused()).to.equal(true);
    // Read again, everything comes, in order.
    let xs = 0;
    let hashes = 0;
    session.stdout.on('data', (chunk: Buffer) => {
      xs += chunk.length;
    });
    session.stderr.on('data', (chunk: Buffer) => {
      hashes += chunk.length;
    });
    session.stdout.resume();
    session.stderr.resume();
    for (let i = 0; i < 200 && xs < 200 * 64 * 1024; i++) await new Promise((r) => setTimeout(r, 5));
    expect(xs).to.equal(200 * 64 * 1024);
    expect(hashes).to.equal(200);
  });
});
