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
