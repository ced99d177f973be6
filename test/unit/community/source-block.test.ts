import { expect } from 'chai';
import { sourceBlock } from '../../../plugins/community/users/source-limit';

describe('community: the source a login limit counts', () => {
  it('is the address for IPv4, IPv4-mapped IPv6 included', () => {
    expect(sourceBlock('203.0.113.7')).to.equal('203.0.113.7');
    expect(sourceBlock('::ffff:203.0.113.7')).to.equal('203.0.113.7');
  });

  it('is the /64 for IPv6, however the address is written', () => {
    expect(sourceBlock('2001:db8:1:2:3:4:5:6')).to.equal('2001:db8:1:2::/64');
    expect(sourceBlock('2001:0db8:0001:0002::9')).to.equal('2001:db8:1:2::/64');
    expect(sourceBlock('2001:db8::1')).to.equal('2001:db8:0:0::/64');
    expect(sourceBlock('::1')).to.equal('0:0:0:0::/64');
  });
});
