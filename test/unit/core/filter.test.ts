import { expect } from 'chai';
import { HttpError } from '../../../core/errors';
import { parseFilter } from '../../../core/http/list';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

describe('list filters', () => {
  it('decodes property and operator items', () => {
    const items = [
      { type: 'property', params: { name: 'name', operator: 'contains', value: 'edge' } },
      { type: 'operator', params: { name: 'or' } },
      { type: 'property', params: { name: 'online', operator: 'bool', value: true } },
    ];
    expect(parseFilter(b64(items))).to.deep.equal(items);
    expect(parseFilter(undefined)).to.deep.equal([]);
  });

  for (const [why, encoded] of [
    ['not base64 JSON', 'not-base64-json!!'],
    ['not a list', b64({ type: 'property' })],
    [
      'an unknown operator',
      b64([{ type: 'property', params: { name: 'name', operator: 'like', value: 'x' } }]),
    ],
    ['an unknown joiner', b64([{ type: 'operator', params: { name: 'xor' } }])],
    ['an item without params', b64([{ type: 'property' }])],
  ] as const) {
    it(`answers 400 naming filter for ${why}`, () => {
      try {
        parseFilter(encoded);
        expect.fail('should throw');
      } catch (err) {
        expect(err).to.be.instanceOf(HttpError);
        expect((err as HttpError).status).to.equal(400);
        expect((err as HttpError).fields).to.deep.equal(['filter']);
      }
    });
  }
});
