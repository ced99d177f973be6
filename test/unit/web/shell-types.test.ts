import type { Static, TObject } from '@sinclair/typebox';
import { expect } from 'chai';
import { infoRoutes } from '../../../plugins/community/info/routes';
import { namespaceView } from '../../../plugins/community/namespaces/schemas';
import { userAuth } from '../../../plugins/community/users/schemas';
import type { AuthenticatedUser, InstanceInfo, NamespaceSummary } from '../../../web/src/shell/api/types';

// The shell names no plugin, so its own types (the instance, the signed-in person, the namespace switcher's
// namespaces) cannot be imported from the community plugin's schemas as plugin screens' types are. They are the
// shell's reading of those answers instead, held to them here: the type-check says that every answer is one the
// shell's type accepts, and these tests that every field the shell reads is one the schema answers.

const infoAnswer = (infoRoutes[0] as (typeof infoRoutes)[number]).schema.response[200];

// What the server answers must be assignable to what the shell reads. The role is the one narrowing: the schema
// answers it as a string, the shell knows it is a role or empty.
/** Compiles only when the answer is assignable to the shell's type. */
function fits<_Answer extends Read, Read>(): void {}

// Every field of the shell's types, as data; `satisfies` makes the compiler hold each list complete.
const readsInfo = {
  version: true,
  endpoints: true,
  setup: true,
  authentication: true,
  plugins: true,
  console_modules: true,
  permissions: true,
} satisfies Record<keyof InstanceInfo, true>;
const readsUser = {
  token: true,
  id: true,
  origin: true,
  user: true,
  name: true,
  email: true,
  recovery_email: true,
  tenant: true,
  role: true,
  mfa: true,
  max_namespaces: true,
  admin: true,
} satisfies Record<keyof AuthenticatedUser, true>;
const readsNamespace = { name: true, tenant_id: true } satisfies Record<keyof NamespaceSummary, true>;

function answered(schema: TObject): string[] {
  return Object.keys(schema.properties);
}

describe("console: the shell's own types read what the community plugin answers", () => {
  it('reads of GET /info only fields the route answers', () => {
    fits<Static<typeof infoAnswer>, InstanceInfo>();
    expect(answered(infoAnswer)).to.include.members(Object.keys(readsInfo));
  });

  it('reads of a sign-in only fields the user authentication answers', () => {
    fits<Omit<Static<typeof userAuth>, 'role'>, Omit<AuthenticatedUser, 'role'>>();
    expect(answered(userAuth)).to.include.members(Object.keys(readsUser));
  });

  it("reads of the namespace switcher's namespaces only fields the Namespace entity answers", () => {
    fits<Static<typeof namespaceView>, NamespaceSummary>();
    expect(answered(namespaceView)).to.include.members(Object.keys(readsNamespace));
  });
});
