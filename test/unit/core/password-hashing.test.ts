import { PasswordHashing } from '@gatehouse/core';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';

function hashing(concurrency: number, queue: number): PasswordHashing {
  const config = loadConfig({}, {});
  return new PasswordHashing({
    config: { ...config, auth: { ...config.auth, hashConcurrency: concurrency, hashQueue: queue } },
  });
}

describe('core: bounded password hashing', function () {
  this.timeout(30_000);

  it('runs one hash per slot, queues the next and refuses beyond the queue with 429', async () => {
    const h = hashing(1, 1);
    const stored = await h.hash('secret');
    const first = h.verify('secret', stored, 'a');
    const second = h.verify('wrong', stored, 'b');
    expect(h.load).to.deep.equal({ running: 1, waiting: 1 });
    const third = await h.verify('secret', stored, 'c').catch((e: { status: number; headers: object }) => e);
    expect(third).to.include({ status: 429 });
    expect((third as { headers: object }).headers).to.include({ 'Retry-After': '1' });
    expect(await first).to.equal(true);
    expect(await second).to.equal(false);
    expect(h.load).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('serves waiting sources in turn and sheds from the one with the most waiting', async () => {
    const h = hashing(1, 3);
    const stored = await h.hash('secret');
    const done: string[] = [];
    const run = (source: string, name: string) =>
      h.verify('secret', stored, source).then(
        () => done.push(name),
        (e: { status: number }) => done.push(`${name}:${e.status}`),
      );
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => run('a', n));
    const other = run('b', 'b1');
    await Promise.all([...flood, other]);
    // a5 found the queue full of a's own; b1 took the place of a's newest waiter (a4).
    expect(done).to.deep.equal(['a5:429', 'a4:429', 'a1', 'a2', 'b1', 'a3']);
  });

  it('leaves one of two slots to other sources while one source floods', async () => {
    const h = hashing(2, 8);
    const stored = await h.hash('secret');
    const flood = Array.from({ length: 4 }, () => h.verify('wrong', stored, 'flooder'));
    expect(h.load, 'one slot for the flooder, the rest of its checks wait').to.deep.equal({
      running: 1,
      waiting: 3,
    });
    const real = h.verify('secret', stored, 'real user');
    expect(h.load, 'the other slot is free for another source at once').to.deep.equal({
      running: 2,
      waiting: 3,
    });
    expect(await real).to.equal(true);
    expect(await Promise.all(flood)).to.deep.equal([false, false, false, false]);
  });

  it('lets a known check take the place of an unknown one in a full queue, and serves it first', async () => {
    const h = hashing(1, 2);
    const stored = await h.hash('secret');
    const done: string[] = [];
    const run = (source: string, name: string, known = false) =>
      h.verify('secret', stored, source, known).then(
        () => done.push(name),
        (e: { status: number }) => done.push(`${name}:${e.status}`),
      );
    // Three unknown sources fill the slot and the queue; a fourth unknown one is refused, a known one is not.
    const flood = ['x', 'y', 'z', 'w'].map((s) => run(s, s));
    const known = run('k', 'known', true);
    await Promise.all([...flood, known]);
    expect(done).to.deep.equal(['w:429', 'z:429', 'x', 'known', 'y']);
  });

  it('defaults to one slot per core and eight waiting per slot', () => {
    const h = hashing(0, -1);
    expect(h.concurrency).to.be.at.least(1);
    expect(h.queueLimit).to.equal(8 * h.concurrency);
  });
});
