import { INITIAL_WINDOW } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import { MuxStream, type StreamCarrier } from '../../../protocol/mux/stream';

/** A carrier that only counts the credit the stream grants back. */
function countingCarrier() {
  const granted = { bytes: 0 };
  const carrier: StreamCarrier = {
    sendData() {},
    sendWindow(_id, credit) {
      granted.bytes += credit;
    },
    sendFin() {},
    sendReset() {},
    maxDataFrame: 16 * 1024,
    whenWritable: (done) => done(),
    forget() {},
  };
  return { carrier, granted };
}

describe('agent/mux stream', () => {
  it('keeps half a window of one-byte frames in order for a paused reader, hands them on and credits them', async () => {
    // A peer that sends a frame per byte to a reader that stopped: half a window of tiny chunks waits in the
    // stream, and is taken out again in several goes (the reader's buffer fills), in order.
    const { carrier, granted } = countingCarrier();
    const stream = new MuxStream(carrier, 1, true);
    stream.pause();
    // Half a window: two quarter-window credits' worth, so the credit the reader's taking earns is checked too.
    const count = INITIAL_WINDOW / 2;
    const sent = Buffer.alloc(count);
    for (let i = 0; i < count; i++) {
      sent[i] = i % 251;
      stream.receiveData(sent.subarray(i, i + 1));
    }
    const got: Buffer[] = [];
    let gotBytes = 0;
    stream.on('data', (chunk: Buffer) => {
      got.push(chunk);
      gotBytes += chunk.length;
    });
    stream.resume();
    while (gotBytes < count) await new Promise((resolve) => setImmediate(resolve));
    expect(Buffer.concat(got).equals(sent)).to.equal(true);
    // The peer got its window back for what was taken, in quarter-window steps (an end already seen would stop
    // that, so it comes after).
    expect(granted.bytes).to.equal(count);
    stream.receiveFin();
    await new Promise((resolve) => stream.once('end', resolve));
    stream.destroy();
  });

  it('still refuses a peer that overruns the window with tiny frames', () => {
    const { carrier } = countingCarrier();
    const stream = new MuxStream(carrier, 1, true);
    stream.on('error', () => {});
    stream.pause();
    const one = Buffer.alloc(1024);
    for (let i = 0; i < INITIAL_WINDOW / one.length; i++) stream.receiveData(one);
    expect(() => stream.receiveData(Buffer.of(0))).to.throw(/overran its window/);
    stream.destroy();
  });
});
