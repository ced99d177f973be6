import { randomBytes } from 'node:crypto';
import { Conflict, Forbidden, printable, TenantStore } from '@gatehouse/core';
import { Member, Namespace, User, type UserRow, type UserService } from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import { type AttributeNames, grantedRole } from './settings';

/** The part of a verified SAML assertion the mapping reads. */
export interface Assertion {
  nameID: string;
  nameIDFormat: string;
  attributes: Record<string, unknown>;
}

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
// The names identity providers commonly use (plain, LDAP OIDs, and the claims of Microsoft's IdPs).
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailAddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const NAME_ATTRIBUTES = [
  'displayName',
  'name',
  'cn',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'urn:oid:2.5.4.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  'http://schemas.microsoft.com/identity/claims/displayname',
];
// The field rules of users (plugins/community/users/schemas.ts).
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const USERNAME = /^[A-Za-z0-9\-_.@]{3,30}$/;

/** All string values of an attribute (SAML attributes may be multi-valued). */
export function values(attributes: Record<string, unknown>, name: string | undefined): string[] {
  if (!name) return [];
  const raw = attributes[name];
  const list = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
  return list.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

function first(attributes: Record<string, unknown>, names: (string | undefined)[]): string | undefined {
  for (const name of names) {
    const [value] = values(attributes, name);
    if (value) return value;
  }
  return undefined;
}

/** The e-mail address of an assertion: the mapped attribute, else an e-mail NameID, else the usual attributes. */
export function emailOf(a: Assertion, names: AttributeNames): string | undefined {
  const candidates = names.email
    ? [first(a.attributes, [names.email])]
    : [
        a.nameIDFormat === EMAIL_FORMAT || EMAIL.test(a.nameID) ? a.nameID : undefined,
        first(a.attributes, EMAIL_ATTRIBUTES),
      ];
  const email = candidates.find((c) => c && c.length <= 255 && EMAIL.test(c));
  return email?.toLowerCase();
}

/** A display name within the 3 to 20 characters a name may have. */
export function nameOf(a: Assertion, names: AttributeNames, email: string): string {
  const given = first(a.attributes, names.name ? [names.name] : NAME_ATTRIBUTES);
  const name = printable(given ?? email.split('@')[0] ?? email, 100).slice(0, 20);
  return name.length >= 3 ? name : name.padEnd(3, '_');
}

/** A username as users may have one (3 to 30 of letters, digits, - _ . @), from the mapped attribute or the e-mail. */
export function usernameOf(a: Assertion, names: AttributeNames, email: string): string {
  const given = first(a.attributes, [names.username]);
  if (given && USERNAME.test(given)) return given;
  const base = (given ?? email.split('@')[0] ?? 'user').replace(/[^A-Za-z0-9\-_.@]/g, '-').slice(0, 30);
  return base.length >= 3 ? base : `${base}-user`.slice(0, 30);
}

/**
 * Signs a SAML assertion's person in to their account: found by e-mail address, or created on first sign-in (just
 * in time, with origin `saml` and an unusable random password: they sign in through the IdP). With a namespace attribute mapped, the
 * person becomes a member of each named namespace that exists, with the mapped role (observer by default); an
 * existing member's role follows the IdP, except an owner's.
 */
export class SamlAccounts {
  constructor(
    private readonly db: Knex,
    private readonly users: UserService,
  ) {}

  async accountFor(a: Assertion, names: AttributeNames): Promise<UserRow> {
    const email = emailOf(a, names);
    if (!email) throw new Forbidden('the assertion carries no e-mail address');
    let user: UserRow | undefined = await this.byEmail(email);
    if (!user) user = await this.create(a, names, email);
    if (user.status === 'disabled') throw new Forbidden('this account is disabled');
    if (names.namespace) await this.join(user, values(a.attributes, names.namespace), a, names);
    return user;
  }

  private async byEmail(email: string): Promise<UserRow | undefined> {
    return User.bindKnex(this.db).query().whereRaw('lower(email) = lower(?)', [email]).first();
  }

  private async create(a: Assertion, names: AttributeNames, email: string): Promise<UserRow> {
    const base = usernameOf(a, names, email);
    const name = nameOf(a, names, email);
    for (let attempt = 0; attempt < 5; attempt++) {
      const suffix = attempt === 0 ? '' : `-${randomBytes(2).toString('hex')}`;
      const username = `${base.slice(0, 30 - suffix.length)}${suffix}`;
      try {
        return await this.users.create({
          name,
          username,
          email,
          password: randomBytes(24).toString('base64url'),
          origin: 'saml',
        });
      } catch (err) {
        // Someone holds this username: try another. An e-mail taken meanwhile means a parallel first sign-in.
        if (!(err instanceof Conflict)) throw err;
        const raced = await this.byEmail(email);
        if (raced) return raced;
      }
    }
    throw new Conflict(['username']);
  }

  private async join(user: UserRow, namespaces: string[], a: Assertion, names: AttributeNames) {
    const given = first(a.attributes, [names.role]);
    const role = grantedRole(given);
    for (const name of namespaces.slice(0, 20)) {
      const ns = await Namespace.bindKnex(this.db).query().whereRaw('lower(name) = lower(?)', [name]).first();
      if (!ns || ns.owner === user.id) continue;
      const joining = new TenantStore(this.db, ns.tenant_id)
        .query(Member)
        .insert({ user_id: user.id, role, status: 'accepted' })
        .onConflict(['tenant_id', 'user_id']);
      // Without a role from the IdP, a member keeps the role given in Gatehouse.
      await (given ? joining.merge({ role, status: 'accepted' }) : joining.ignore());
    }
  }
}
