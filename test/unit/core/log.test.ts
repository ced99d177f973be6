import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger, prettyLogs } from '../../../core/log';

/** A stream that keeps what is written, and says it is (or is not) a terminal. */
function sink(isTTY: boolean) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = isTTY;
  return { stream, text: () => lines.join('') };
}

// `npm start` in a terminal printed JSON lines; a person reading them wants lines, a log collector wants JSON.
describe('logs', () => {
  it('are human-readable on a terminal and JSON lines elsewhere, unless the configuration says which', () => {
    expect(prettyLogs({ log: { level: 'info' } }, { isTTY: true })).to.equal(true);
    expect(prettyLogs({ log: { level: 'info' } }, { isTTY: false })).to.equal(false);
    expect(prettyLogs({ log: { level: 'info' } }, {})).to.equal(false);
    expect(prettyLogs({ log: { level: 'info', pretty: false } }, { isTTY: true })).to.equal(false);
    expect(prettyLogs({ log: { level: 'info', pretty: true } }, { isTTY: false })).to.equal(true);
  });

  it('writes a readable line to a terminal, with the level, the message and the fields', () => {
    const tty = sink(true);
    createLogger({ log: { level: 'info' } }, tty.stream as never).info({ url: 'http://x:1' }, 'listening');
    const out = tty.text();
    expect(out).to.match(/INFO/);
    expect(out).to.include('listening');
    expect(out).to.include('http://x:1');
    expect(() => JSON.parse(out)).to.throw();
  });

  it('writes one JSON object per line elsewhere, with secrets redacted', () => {
    const pipe = sink(false);
    createLogger({ log: { level: 'info' } }, pipe.stream as never).info({ password: 'hunter2' }, 'listening');
    const entry = JSON.parse(pipe.text());
    expect(entry).to.include({ msg: 'listening', level: 30, password: '[redacted]' });
  });
});
