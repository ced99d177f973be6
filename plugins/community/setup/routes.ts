import { BadRequest, defineRoute, Forbidden, fromDatabaseError, HttpError } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { namespaceNameFor } from '../namespaces/schemas';
import { email, name, password, username } from '../users/schemas';
import { checkSetupSignature } from './signature';

/**
 * First-run setup: registers the first user and a namespace named after them. The link carrying
 * `sign` comes from `gatehouse setup-url`. Concurrent setups serialise on the `setup` row, so only one user results.
 */
export const setupRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/setup',
    auth: ['none'],
    summary: 'Create the first user and namespace',
    tags: ['setup'],
    // It takes the first password and the setup signature; no cache between keeps any part of the exchange.
    secret: true,
    schema: {
      query: T.Object({ sign: T.String({ description: 'Signature printed by `gatehouse setup-url`.' }) }),
      body: T.Object({ name, email, username, password }),
      response: { 200: T.Object({}) },
    },
    async handler({ query, body, services }) {
      if (!checkSetupSignature(services.keys, query.sign)) throw new Forbidden('invalid setup signature');
      await services.db.transaction(async (trx) => {
        try {
          await trx('system_state').insert({
            key: 'setup',
            value: JSON.stringify({ username: body.username }),
          });
        } catch (err) {
          const mapped = fromDatabaseError(err);
          if (mapped instanceof HttpError && mapped.status === 409)
            throw new Forbidden('setup is already done');
          throw err;
        }
        if (await services.users.any(trx)) throw new Forbidden('setup is already done');
        // The setup user is the instance's administrator.
        const user = await services.users.create({ ...body, admin: true }, trx);
        const nsName = namespaceNameFor(body.username);
        if (nsName.length < 3)
          throw new BadRequest('cannot derive a namespace name from this username', ['username']);
        await services.namespaces.create(nsName, user.id, trx);
      });
      return {};
    },
  }),
];
