import { Card, type MemberPermission, memberRoles, type Role, useConsole } from '@gatehouse/console';
import { Fragment } from 'react';
import { roleLabels } from './roles';

/**
 * What each role may do, for the Roles card: the summaries of the calls whose least role is that role, from the
 * server's permission table (GET /info `permissions`). Each role may do what the roles below it may, so a role's
 * line names only what it adds. Reads are listed for the lowest role only. The same summary for two calls (a
 * device's and a container's) is said once.
 */
export function roleDuties(
  table: readonly MemberPermission[],
): { role: Role; lead: string; duties: string[] }[] {
  return memberRoles.map((role, i) => {
    const below = memberRoles[i + 1];
    const duties = [...new Set(table.filter((p) => p.role === role).map((p) => p.summary))];
    const lead = below ? `Everything ${article(roleLabels[below])} can do, and:` : 'Can:';
    return { role, lead, duties };
  });
}

function article(word: string): string {
  return `${/^[AEIOU]/.test(word) ? 'an' : 'a'} ${word.toLowerCase()}`;
}

export function RolesCard() {
  const { info } = useConsole();
  const table = info.permissions ?? [];
  return (
    <Card title="Roles">
      <div className="card-body">
        <dl className="props">
          {roleDuties(table).map(({ role, lead, duties }) => (
            <Fragment key={role}>
              <dt>{roleLabels[role]}</dt>
              <dd data-role={role}>
                {lead} {duties.length ? duties.join('; ') : 'nothing more'}.
              </dd>
            </Fragment>
          ))}
        </dl>
      </div>
    </Card>
  );
}
