import { defineRoute, Forbidden, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { filterTagRoutes } from '../matching/filter-tag-routes';
import {
  createPublicKeyBody,
  fingerprintParams,
  fingerprintTagParams,
  gatewaySignAnswer,
  gatewaySignBody,
  publicKeySchema,
  updatePublicKeyBody,
} from './schemas';

const tags = ['public keys'];
const keyAnswer = { 200: publicKeySchema };

/** Public keys of the namespace. */
export const sshkeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/sshkeys/public-keys',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the namespace public keys',
    tags,
    paged: true,
    schema: {
      query: T.Object(pageQuery, { additionalProperties: true }),
      response: { 200: T.Array(publicKeySchema) },
      headers: { 'X-Total-Count': 'Number of public keys in the namespace.' },
    },
    handler: ({ query, services }) => services.namespacePublicKeys.list(query),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sshkeys/public-keys',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Register a public key for signing in to devices',
    description:
      'data is base64 of the authorized_keys line; 422 when it is not a public key, 409 when the key is ' +
      'already registered in the namespace.',
    tags,
    schema: { body: createPublicKeyBody, response: keyAnswer },
    async handler({ body, services }) {
      return services.namespacePublicKeys.create(body);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/sshkeys/public-keys/:fingerprint',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Update the name, username expression or filter of a public key',
    tags,
    schema: { params: fingerprintParams, body: updatePublicKeyBody, response: keyAnswer },
    async handler({ params, body, services }) {
      return services.namespacePublicKeys.update(params.fingerprint, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/sshkeys/public-keys/:fingerprint',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Delete a public key',
    tags,
    schema: { params: fingerprintParams, response: { 200: T.Object({}) } },
    async handler({ params, services }) {
      await services.namespacePublicKeys.remove(params.fingerprint);
      return {};
    },
  }),
  ...filterTagRoutes({
    path: '/api/sshkeys/public-keys/:fingerprint',
    key: 'fingerprint',
    params: fingerprintParams,
    tagParams: fingerprintTagParams,
    answer: publicKeySchema,
    noun: 'public key',
    tags,
    holder: (services) => services.namespacePublicKeys,
    descriptions: {
      add: '406 when the key already has 3 tags.',
      removeInPath: '406 when it is the last tag of the filter.',
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/auth/ssh',
    auth: ['device'],
    summary: 'Sign a gateway sign-in blob (agents verify public-key sign-in with it)',
    description:
      'The agent sends the MD5 fingerprint of the key offered to it and the blob that was signed. The server ' +
      'answers the Ed25519 signature of the blob by its gateway key when the fingerprint is the gateway key and ' +
      'the blob is the one the gateway itself signed, within the last 30 seconds, to sign in to the calling ' +
      'device; the agent compares it with the signature it received. Each such blob is answered once. 404 for ' +
      'any other key, 403 for any other blob.',
    tags,
    schema: { body: gatewaySignBody, response: { 200: gatewaySignAnswer } },
    async handler({ body, caller, services }) {
      if (caller.kind !== 'device') throw new Forbidden('this call is for devices');
      return services.gatewaySigner.sign(caller.uid, body.fingerprint, body.data);
    },
  }),
];
