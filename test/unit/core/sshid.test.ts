import { expect } from 'chai';
import { parseSshId } from '../../../core/ssh/sshid';

describe('SSH user names at the gateway', () => {
  it('splits at the first @ then the first dot', () => {
    expect(parseSshId('root@acme.web-01')).to.deep.equal({
      user: 'root',
      namespace: 'acme',
      device: 'web-01',
    });
    expect(parseSshId('pi@home.kitchen.pi')).to.deep.equal({
      user: 'pi',
      namespace: 'home',
      device: 'kitchen.pi',
    });
    expect(parseSshId('a@b@acme.dev')).to.deep.equal({ user: 'a', namespace: 'b@acme', device: 'dev' });
  });

  it('reads a target without a dot as a device uid', () => {
    const uid = 'a'.repeat(64);
    expect(parseSshId(`root@${uid.toUpperCase()}`)).to.deep.equal({ user: 'root', uid });
    expect(parseSshId('root@not-a-uid')).to.equal(undefined);
  });

  it('rejects empty parts', () => {
    for (const bad of ['', 'root', '@acme.dev', 'root@', 'root@.dev', 'root@acme.']) {
      expect(parseSshId(bad), bad).to.equal(undefined);
    }
  });
});
