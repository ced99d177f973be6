import { type Static, Type as T } from '@sinclair/typebox';

/** What deleting an account takes with it (`GET /api/user/deletion`), and what the deletion asks for. */
export const deletionPreview = T.Object({
  namespaces: T.Array(
    T.Object({
      tenant_id: T.String(),
      name: T.String(),
      devices: T.Integer({ description: 'accepted devices' }),
      members: T.Integer({ description: 'members besides you, who lose access' }),
      subscription: T.String({ description: "the subscription status, 'inactive' without one" }),
    }),
  ),
  memberships: T.Array(T.Object({ tenant_id: T.String(), name: T.String(), role: T.String() })),
  confirm: T.Object({ password: T.Boolean(), code: T.Boolean() }),
});
export type DeletionPreview = Static<typeof deletionPreview>;
