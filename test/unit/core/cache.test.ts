import { expect } from 'chai';
import { createCache } from '../../../core/cache';

describe('the in-process cache', () => {
  it('take reads and deletes in one step: of racing callers exactly one gets the value', async () => {
    const cache = createCache(undefined);
    try {
      await cache.set('ticket', 'grant', 30);
      const answers = await Promise.all([cache.take('ticket'), cache.take('ticket'), cache.take('ticket')]);
      expect(answers.filter((a) => a === 'grant')).to.have.length(1);
      expect(await cache.get('ticket')).to.equal(null);
      expect(await cache.take('absent')).to.equal(null);
    } finally {
      await cache.close();
    }
  });
});

// Both kinds of cache, the in-process one always and Redis when TEST_REDIS_URL names one.
for (const [kind, url] of [
  ['the in-process cache', undefined],
  ...(process.env.TEST_REDIS_URL ? [['Redis', process.env.TEST_REDIS_URL]] : []),
] as const) {
  describe(`messages as bytes, on ${kind}`, () => {
    it('hands bytes over unchanged, text as its UTF-8, in the order published, and the same Buffer to each handler', async () => {
      const cache = createCache(url, `gatehouse-test-bytes-${Math.random().toString(16).slice(2)}:`);
      try {
        const heard: Buffer[] = [];
        const again: Buffer[] = [];
        const text: string[] = [];
        const stops = [
          await cache.subscribeBytes('live', (m) => heard.push(m)),
          await cache.subscribeBytes('live', (m) => again.push(m)),
          await cache.subscribe('live', (m) => text.push(m)),
        ];
        const binary = Buffer.from([0x01, 0x00, 0xff, 0xfe, 0x80, 0x7b]);
        await cache.publish('live', '{"type":"sync"}');
        await cache.publishBytes('live', binary);
        await cache.publish('live', 'é');
        for (let i = 0; i < 100 && heard.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
        expect(heard.map((b) => b.toString('hex'))).to.deep.equal([
          Buffer.from('{"type":"sync"}').toString('hex'),
          binary.toString('hex'),
          Buffer.from('é').toString('hex'),
        ]);
        expect(again.every((b, i) => b === heard[i])).to.equal(true);
        expect(text[0]).to.equal('{"type":"sync"}');
        expect(text[2]).to.equal('é');
        for (const stop of stops) await stop();
        await cache.publishBytes('live', binary);
        await new Promise((r) => setTimeout(r, 50));
        expect(heard).to.have.length(3);
      } finally {
        await cache.close();
      }
    });
  });
}
