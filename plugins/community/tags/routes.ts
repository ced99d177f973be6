import { defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { tag } from '../devices/schemas';

const tagParams = T.Object({ tag });
const conflict = T.Array(T.String(), { description: 'The conflicting field: ["tag"].' });
const refusal = T.Object({
  message: T.String({ description: 'Which key and rule filters hold only this tag.' }),
});

/** Tags across the namespace. */
export const tagRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/tags',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the tags used in the namespace',
    description:
      'Tags of devices, containers, public-key filters and firewall-rule filters, each once, sorted.',
    tags: ['tags'],
    schema: { response: { 200: T.Array(T.String()) } },
    async handler({ services }) {
      return services.tags.list();
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/tags/:tag',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Rename a tag everywhere in the namespace',
    description:
      'Renames the tag on devices, containers, public-key filters and firewall-rule filters at once (one ' +
      'transaction). 404 when nothing in the namespace has the tag; 409 ["tag"] when the new name is already a ' +
      'tag anywhere in the namespace.',
    tags: ['tags'],
    schema: {
      params: tagParams,
      body: T.Object({ tag }),
      response: { 200: T.Object({}), 409: conflict },
    },
    async handler({ params, body, services }) {
      await services.tags.rename(params.tag, body.tag);
      return {};
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/tags/:tag',
    auth: ['user', 'apiKey'],
    role: 'operator',
    summary: 'Delete a tag everywhere in the namespace',
    description:
      'Removes the tag from devices, containers, public-key filters and firewall-rule filters at once (one ' +
      'transaction). A key or rule filter holds 1 to 3 tags, and an emptied one must not come to mean every ' +
      'device: when the tag is the only one of some filter, the delete is refused with 406, the message names ' +
      'those keys and rules, and nothing changes. 404 when nothing in the namespace has the tag.',
    tags: ['tags'],
    schema: { params: tagParams, response: { 200: T.Object({}), 406: refusal } },
    async handler({ params, services }) {
      await services.tags.delete(params.tag);
      return {};
    },
  }),
];
