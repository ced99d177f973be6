import { expect } from 'chai';
import {
  byOsId,
  filterSearch,
  fleetFilter,
  noFilters,
  readFilters,
} from '../../../plugins/community/web/devices/filters';

describe('device list filters', () => {
  it('reads the filters from the address and writes back only those set', () => {
    const f = readFilters('?q=web&tag=production&os=alpine&online=offline&page=2&field=owner&value=team');
    expect(f).to.deep.equal({
      q: 'web',
      tag: 'production',
      os: 'alpine',
      online: 'offline',
      field: 'owner',
      value: 'team',
    });
    expect(filterSearch(f)).to.equal('?q=web&tag=production&os=alpine&online=offline&field=owner&value=team');
    expect(filterSearch(noFilters)).to.equal('');
    // An online state that is neither is no filter.
    expect(readFilters('?online=sideways').online).to.equal('');
    // A custom field the server would refuse is no filter, and neither is its value.
    expect(readFilters("?field=o'wner&value=x")).to.deep.include({ field: '', value: '' });
    expect(readFilters('?value=x')).to.deep.include({ field: '', value: '' });
    for (const dots of ['.', '..']) expect(readFilters(`?field=${dots}&value=x`).field).to.equal('');
    expect(readFilters('?field=...').field).to.equal('...');
  });

  it('searches name, tag and address with or, then joins each filter with and', () => {
    const items = fleetFilter(
      { q: ' db ', tag: 'production', os: 'alpine', online: 'online', field: 'owner', value: ' team ' },
      'accepted',
    );
    expect(
      items.map((i) => (i.type === 'operator' ? i.params.name : `${i.params.name}=${i.params.value}`)),
    ).to.deep.equal([
      'name=db',
      'or',
      'tags=db',
      'or',
      'remote_addr=db',
      'and',
      'tags=production',
      'and',
      'info.id=alpine',
      'and',
      'online=true',
      'and',
      'custom_fields.owner=team',
    ]);
    // A field shown without a value filters nothing.
    expect(fleetFilter({ ...noFilters, field: 'owner' }, 'accepted')).to.deep.equal([]);
    expect(fleetFilter(noFilters, 'accepted')).to.deep.equal([]);
    // Online applies to accepted devices only.
    expect(fleetFilter({ ...noFilters, online: 'offline' }, 'pending')).to.deep.equal([]);
    expect(fleetFilter({ ...noFilters, os: 'debian' }, 'pending')).to.have.length(1);
  });

  it('offers one operating-system choice per id, named by its most used version', () => {
    expect(
      byOsId([
        { id: 'debian', pretty_name: 'Debian GNU/Linux 12', count: 3 },
        { id: 'alpine', pretty_name: 'Alpine Linux v3.20', count: 2 },
        { id: 'debian', pretty_name: 'Debian GNU/Linux 11', count: 1 },
        { id: '', pretty_name: '', count: 4 },
      ]),
    ).to.deep.equal([
      { id: 'debian', pretty_name: 'Debian GNU/Linux 12', count: 4 },
      { id: 'alpine', pretty_name: 'Alpine Linux v3.20', count: 2 },
    ]);
  });
});
