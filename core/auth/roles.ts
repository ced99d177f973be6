/** Member roles, highest first. */
export const roles = ['owner', 'administrator', 'operator', 'observer'] as const;
export type Role = (typeof roles)[number];

const rank: Record<Role, number> = { owner: 4, administrator: 3, operator: 2, observer: 1 };

/** True when `have` is at least `need`. */
export function roleAtLeast(have: Role | undefined, need: Role): boolean {
  return have !== undefined && rank[have] >= rank[need];
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}
