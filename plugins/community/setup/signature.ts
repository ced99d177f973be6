import { sign, verify } from 'node:crypto';
import type { InstanceKeys } from '@gatehouse/core';

const MESSAGE = Buffer.from('gatehouse:setup:v1');

/** The `sign` query parameter of the setup link: an Ed25519 signature by the instance key, base64url. */
export function setupSignature(keys: InstanceKeys): string {
  return sign(null, MESSAGE, keys.jwtPrivate).toString('base64url');
}

export function checkSetupSignature(keys: InstanceKeys, signature: string): boolean {
  if (!/^[A-Za-z0-9_-]{86}$/.test(signature)) return false;
  return verify(null, MESSAGE, keys.jwtPublic, Buffer.from(signature, 'base64url'));
}

export function setupUrl(publicUrl: string, keys: InstanceKeys): string {
  return `${publicUrl}/setup?sign=${setupSignature(keys)}`;
}
