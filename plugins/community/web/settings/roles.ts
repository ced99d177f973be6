import type { Role } from '@gatehouse/console';

export const roleLabels: Record<Role, string> = {
  owner: 'Owner',
  administrator: 'Administrator',
  operator: 'Operator',
  observer: 'Observer',
};

const rank: Record<Role, number> = { observer: 0, operator: 1, administrator: 2, owner: 3 };

/** Roles a person may hand out: never above their own. */
export function grantableRoles(mine: Role | '' | undefined, includeOwner = false): Role[] {
  const limit = mine ? rank[mine] : 0;
  return (Object.keys(rank) as Role[]).filter((r) => rank[r] <= limit && (includeOwner || r !== 'owner'));
}
