import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';
import { createCache } from '../../../core/cache';
import { SshPenalties } from '../../../core/ssh/penalties';
import { StartupLimits } from '../../../core/ssh/startups';

describe('SSH gateway limits before sign-in', () => {
  it('caps unauthenticated connections per source and in total, MaxStartups style', () => {
    // start 2, rate 50 %, full 4: the random draw decides between start and full.
    let draw = 0.9;
    const limits = new StartupLimits('2:50:4', 3, () => draw);
    expect(limits.admit('a')).to.equal('ok');
    expect(limits.admit('b')).to.equal('ok');
    // At 2 of 4 the chance of refusal is 50 %: a draw of 0.9 passes, 0.1 does not.
    expect(limits.admit('c')).to.equal('ok');
    draw = 0.1;
    expect(limits.admit('c')).to.equal('full');
    draw = 0.99;
    // At 3 of 4 the chance is 75 %.
    expect(limits.admit('c')).to.equal('ok');
    expect(limits.admit('d')).to.equal('full');
    limits.release('a');
    limits.release('b');
    expect(limits.size).to.equal(2);
    expect(limits.admit('c')).to.equal('ok');
    // Three from c now: the per-source cap refuses a fourth whatever the total.
    expect(limits.admit('c')).to.equal('source');
  });

  it('penalises a source by time: slower answers first, then refusal until the time runs out', async () => {
    const cache = createCache(undefined);
    const config = loadConfig(
      {},
      {
        ssh: {
          penalties: { authFail: 10, preAuthTimeout: 1, min: 15, max: 30, exempt: ['10.9.0.0/16', '::1'] },
        },
      },
    );
    const penalties = new SshPenalties(cache, config);
    try {
      expect(await penalties.penalise('192.0.2.1', 'authFail')).to.deep.equal({
        delayMs: 2000,
        blockedFor: 0,
      });
      expect(await penalties.blockedFor('192.0.2.1')).to.equal(0);
      const second = await penalties.penalise('192.0.2.1', 'authFail');
      expect(second.delayMs).to.equal(3000);
      expect(second.blockedFor).to.be.within(19, 20);
      expect(await penalties.blockedFor('192.0.2.1')).to.be.within(19, 20);
      // The cap: never more than max.
      expect((await penalties.penalise('192.0.2.1', 'authFail')).blockedFor).to.be.within(29, 30);
      expect((await penalties.penalise('192.0.2.1', 'authFail')).blockedFor).to.be.within(29, 30);
      // Others are not touched, exempt ones never counted.
      expect(await penalties.blockedFor('192.0.2.2')).to.equal(0);
      for (let i = 0; i < 5; i++) await penalties.penalise('10.9.3.4', 'authFail');
      expect(await penalties.blockedFor('10.9.3.4')).to.equal(0);
      for (let i = 0; i < 5; i++) await penalties.penalise('::1', 'authFail');
      expect(await penalties.blockedFor('::1')).to.equal(0);
      // An IPv6 source counts by its /64.
      await penalties.penalise('2001:db8:1:2::10', 'authFail');
      await penalties.penalise('2001:db8:1:2:ffff::99', 'authFail');
      expect(await penalties.blockedFor('2001:db8:1:2::77')).to.be.greaterThan(0);
      expect(await penalties.blockedFor('2001:db8:1:3::10')).to.equal(0);
      expect(SshPenalties.source('::ffff:192.0.2.7')).to.equal('192.0.2.7');
      // Blocks of neighbouring sources: an IPv4 /24, an IPv6 /48; anything else is a block of its own.
      expect(SshPenalties.block('192.0.2.7')).to.equal('192.0.2.0/24');
      expect(SshPenalties.block('::ffff:192.0.2.200')).to.equal('192.0.2.0/24');
      expect(SshPenalties.block('2001:db8:1:2::10')).to.equal('2001:db8:1::/48');
      expect(SshPenalties.block('2001:DB8:1:ffff:1::9')).to.equal('2001:db8:1::/48');
      expect(SshPenalties.block('2001:db8:2::1')).to.not.equal(SshPenalties.block('2001:db8:1::1'));
      expect(SshPenalties.block('not an address')).to.equal('not an address');
    } finally {
      await cache.close();
    }
  });

  it('pauses a target that failures from many sources aimed at, and counts nothing from an exempt one', async () => {
    const cache = createCache(undefined);
    const config = loadConfig(
      {},
      {
        ssh: {
          penalties: {
            authFail: 1,
            min: 15,
            max: 30,
            targetAuthFail: 10,
            targetMin: 25,
            exempt: ['10.9.0.0/16'],
          },
        },
      },
    );
    const penalties = new SshPenalties(cache, config);
    try {
      const target = 'device:abc:root';
      expect(await penalties.penaliseTarget('192.0.2.1', target)).to.equal(0);
      expect(await penalties.penaliseTarget('192.0.2.2', target)).to.equal(0);
      expect(await penalties.targetBlockedFor(target)).to.equal(0);
      // The third source brings the target past its minimum: paused, up to max, whoever tries next.
      expect(await penalties.penaliseTarget('192.0.2.3', target)).to.be.within(29, 30);
      expect(await penalties.targetBlockedFor(target)).to.be.within(29, 30);
      // Another target is not touched; the sources themselves are not refused for one failure each.
      expect(await penalties.targetBlockedFor('device:abc:admin')).to.equal(0);
      expect(await penalties.blockedFor('192.0.2.3')).to.equal(0);
      for (let i = 0; i < 5; i++)
        expect(await penalties.penaliseTarget('10.9.3.4', 'device:def:root')).to.equal(0);
      expect(await penalties.targetBlockedFor('device:def:root')).to.equal(0);
    } finally {
      await cache.close();
    }
  });
});
