import { expect } from 'chai';
import { INITIAL_WINDOW } from '../../../agent/mux/frame';
import { MuxStream, type StreamCarrier } from '../../../agent/mux/stream';

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
  it('keeps a window of one-byte frames in order for a paused reader, and hands them all on', async () => {
    // A peer that sends a frame per byte to a reader that stopped: a whole window of tiny chunks waits in the
    // stream, and is taken out again in several goes (the reader's buffer fills), in order.
    const { carrier, granted } = countingCarrier();
    const stream = new MuxStream(carrier, 1, true);
    stream.pause();
    const count = INITIAL_WINDOW / 8;
    const sent: number[] = [];
    for (let i = 0; i < count; i++) {
      const byte = i % 251;
      sent.push(byte);
      stream.receiveData(Buffer.of(byte));
    }
    stream.receiveFin();
    const got: number[] = [];
    stream.on('data', (chunk: Buffer) => {
      for (const byte of chunk) got.push(byte);
    });
    stream.resume();
    await new Promise((resolve) => stream.once('end', resolve));
    expect(got.length).to.equal(count);
    expect(got).to.deep.equal(sent);
    // Every byte taken was credited back except the last, partial quarter window.
    expect(granted.bytes).to.be.at.least(count - INITIAL_WINDOW / 4);
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
