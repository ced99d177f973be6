import { Type as T } from '@sinclair/typebox';

/**
 * Namespace names appear in SSH user names (`user@<namespace>.<device>`), so they are DNS-label-like:
 * 3 to 30 lowercase letters, digits and hyphens, not starting or ending with a hyphen, and no dots.
 */
export const namespaceName = T.String({
  minLength: 3,
  maxLength: 30,
  pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
});
export const NAMESPACE_NAME = /^[a-z0-9]([a-z0-9-]{1,28}[a-z0-9])$/;

/** A namespace name derived from a username (setup names the first namespace after its user). */
export function namespaceNameFor(username: string): string {
  const base = username
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30)
    .replace(/-+$/, '');
  return base.length >= 3 ? base : `${base}-ns`.replace(/^-/, '');
}
