import { expect } from 'chai';
import { parseSshId, printable, SSHID_MAX_LENGTH } from '../../../core/ssh/sshid';

describe('SSH user names at the gateway', () => {
  it('splits at the first @ then the first dot', () => {
    expect(parseSshId('root@acme.web-01')).to.deep.equal({
      user: 'root',
      namespace: 'acme',
      device: 'web-01',
    });
    expect(parseSshId('pi.user_2@Home-Lab.Kitchen')).to.deep.equal({
      user: 'pi.user_2',
      namespace: 'Home-Lab',
      device: 'Kitchen',
    });
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

  it('rejects what no namespace, device or device user can be called, before anything is looked up', () => {
    const bad = [
      // A NUL byte (PostgreSQL refuses it in text) in each part.
      'ro\0ot@acme.dev',
      'root@ac\0me.dev',
      'root@acme.de\0v',
      // Longer than any part can be.
      `${'u'.repeat(65)}@acme.dev`,
      `root@${'n'.repeat(31)}.dev`,
      `root@acme.${'d'.repeat(64)}`,
      `root@${'f'.repeat(65)}`,
      // Characters the names do not have: dots in a device, @ in a namespace, escapes, spaces, hyphen ends.
      'pi@home.kitchen.pi',
      'a@b@acme.dev',
      'root@acme.dev\u001b[2J',
      'root@acme.my dev',
      'root@-acme.dev',
      'root@acme.dev-',
      '-root@acme.dev',
      'root@ab.dev',
    ];
    for (const name of bad) expect(parseSshId(name), JSON.stringify(name)).to.equal(undefined);
    expect(parseSshId(`${'u'.repeat(64)}@${'n'.repeat(30)}.${'d'.repeat(63)}`)).to.not.equal(undefined);
    expect(`${'u'.repeat(64)}@${'n'.repeat(30)}.${'d'.repeat(63)}`.length).to.equal(SSHID_MAX_LENGTH);
    expect(parseSshId(`x${'u'.repeat(64)}@${'n'.repeat(30)}.${'d'.repeat(63)}`)).to.equal(undefined);
  });

  it('makes client text printable: no escape sequences, bounded length', () => {
    expect(printable('a\u001b[31mred\u0007\u0000\u009b2J')).to.equal('a?[31mred???2J');
    expect(printable('x'.repeat(200))).to.equal(`${'x'.repeat(80)}...`);
  });
});
