import { Type as T } from '@sinclair/typebox';
import { expect } from 'chai';
import { fieldsOf } from '../../../core/http/router';
import { closeObjects, createAjv, unstorableFields } from '../../../core/validation';

/** What a 400 names: the fields ajv refused in a closed schema, and strings no store keeps. */
describe('validation: the field names of a 400', () => {
  const filter = T.Union([
    T.Object({ hostname: T.String() }),
    T.Object({ tags: T.Array(T.String({ minLength: 3 }), { minItems: 1 }) }),
  ]);
  const body = closeObjects(
    T.Object({
      action: T.Union([T.Literal('allow'), T.Literal('deny')]),
      priority: T.Optional(T.Integer({ minimum: 0 })),
      filter: T.Optional(filter),
      settings: T.Optional(T.Object({ on: T.Boolean() })),
    }),
  );
  const check = createAjv().compile(body);
  const names = (value: unknown) => {
    expect(check(value)).to.equal(false);
    return fieldsOf(check.errors ?? []);
  };

  it('names unknown fields at the top and inside nested objects', () => {
    expect(names({ action: 'allow', tenant_id: 'x', settings: { on: true, id: 1 } })).to.have.members([
      'tenant_id',
      'settings.id',
    ]);
  });

  it('names only what is wrong for the union branch the value came closest to', () => {
    expect(names({ action: 'allow', filter: { hostname: '.*', extra: 1 } })).to.deep.equal(['filter.extra']);
    expect(names({ action: 'allow', filter: { tags: ['ab'] } })).to.deep.equal(['filter.tags.0']);
    expect(names({ action: 'maybe' })).to.deep.equal(['action']);
    expect(names({ action: 'allow', priority: -1, stray: 1 })).to.have.members(['priority', 'stray']);
  });

  it('names missing fields and a body that is not an object', () => {
    expect(names({})).to.deep.equal(['action']);
    expect(names([])).to.deep.equal(['body']);
  });

  it('finds NULs and lone surrogates in values and keys at any depth', () => {
    expect(
      unstorableFields({ a: 'x\u0000', b: { c: ['ok', '\ud800'] }, 'k\u0000': 1 }, 'body'),
    ).to.have.members(['a', 'b.c.1', 'k\u0000']);
    expect(unstorableFields('\udc00', 'id')).to.deep.equal(['id']);
    expect(unstorableFields({ fine: '😀 é ｱ', n: 1, z: null }, 'body')).to.deep.equal([]);
  });

  it('closes objects without touching those that say what else they take', () => {
    const open = closeObjects(
      T.Object({
        meta: T.Record(T.String(), T.String()),
        extra: T.Object({}, { additionalProperties: true }),
      }),
    );
    const ok = createAjv().compile(open);
    expect(ok({ meta: { any: 'x' }, extra: { free: 1 } })).to.equal(true);
    expect(ok({ meta: {}, extra: {}, stray: 1 })).to.equal(false);
  });
});
