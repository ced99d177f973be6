import cloud from '@site/generated/permissions-cloud.json';
import community from '@site/generated/permissions-community.json';
import enterprise from '@site/generated/permissions-enterprise.json';
import Heading from '@theme/Heading';
import type { ReactNode } from 'react';
import styles from './PermissionMatrix.module.css';

// The three lists come from `gatehouse permissions <edition> --json` at build time
// (scripts/export-api.mjs), i.e. from the server's route tables: the same data that the
// server's permission check reads, so this page cannot promise a role more than it has.
interface Callers {
  user: boolean;
  apiKey: boolean;
  device: boolean;
  none: boolean;
  internal: boolean;
  /** The data directory's local socket (the `gatehouse` command on the server's machine). */
  local?: boolean;
}
interface Call {
  method: string;
  path: string;
  summary?: string;
  plugin?: string;
  callers: Callers;
  role: string | null;
  roles: string[];
  /** Instance administration: instance administrators only, whatever their namespace role. */
  instanceAdmin?: boolean;
}

const editions = { community, enterprise, cloud } as Record<string, Call[]>;
const editionNames = Object.keys(editions);
const roleNames = ['owner', 'administrator', 'operator', 'observer'];
const callerLabels: [keyof Callers, string][] = [
  ['user', 'user token'],
  ['apiKey', 'API key'],
  ['device', 'device (agent) token'],
  ['none', 'no authentication'],
  ['internal', 'internal only'],
  ['local', 'the gatehouse command (local socket)'],
];

const keyOf = (call: Call) => `${call.method} ${call.path}`;

/** Every call of every edition once, with the editions that have it. */
function allCalls(): { call: Call; editions: string[] }[] {
  const byKey = new Map<string, { call: Call; editions: string[] }>();
  for (const edition of editionNames) {
    for (const call of editions[edition] ?? []) {
      const entry = byKey.get(keyOf(call));
      if (entry) entry.editions.push(edition);
      else byKey.set(keyOf(call), { call, editions: [edition] });
    }
  }
  return [...byKey.values()];
}

/** The part of the path a reader looks for: /api/devices/{uid} belongs to "devices". */
function areaOf(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'api') return parts[1] ?? 'api';
  return parts[0] ?? path;
}

/** Whether namespace roles apply: they do only to calls a member or an API key makes. */
function rolesApply(callers: Callers): boolean {
  return callers.user || callers.apiKey;
}

function RoleCell({ call, role }: { call: Call; role: string }): ReactNode {
  if (!rolesApply(call.callers) || call.instanceAdmin) return <td className={styles.role}>n/a</td>;
  const allowed = call.roles.includes(role);
  return (
    <td className={styles.role} data-allowed={allowed ? 'yes' : 'no'}>
      {allowed ? 'yes' : 'no'}
    </td>
  );
}

export function PermissionMatrix(): ReactNode {
  const calls = allCalls();
  const areas = new Map<string, { call: Call; editions: string[] }[]>();
  for (const entry of calls) {
    const area = areaOf(entry.call.path);
    areas.set(area, [...(areas.get(area) ?? []), entry]);
  }
  return (
    <div data-permission-matrix>
      <p>
        {calls.length} calls across the {editionNames.join(', ')} editions. A role column says whether a
        member with that role (or an API key with that role) may make the call; n/a means namespace roles do
        not apply to it. Instance administration calls are for instance administrators only, whatever their
        role in a namespace.
      </p>
      {[...areas.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([area, entries]) => (
          <section key={area}>
            <Heading as="h3" id={`calls-${area}`}>
              {area}
            </Heading>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the table is its own scroll box; keyboard readers focus it to scroll */}
            <table className={styles.matrix} tabIndex={0} aria-label={`Who may make the ${area} calls`}>
              <thead>
                <tr>
                  <th>Call</th>
                  <th>Who may call</th>
                  {roleNames.map((role) => (
                    <th key={role}>{role[0]?.toUpperCase() + role.slice(1)}</th>
                  ))}
                  <th>Editions</th>
                </tr>
              </thead>
              <tbody>
                {entries.map(({ call, editions: present }) => (
                  <tr key={keyOf(call)} data-call={keyOf(call)}>
                    <td>
                      <code>
                        {call.method} {call.path}
                      </code>
                      {call.summary ? <span className={styles.summary}>{call.summary}</span> : null}
                    </td>
                    <td>
                      {call.instanceAdmin ? 'instance administrators: ' : ''}
                      {callerLabels
                        .filter(([kind]) => call.callers[kind])
                        .map(([, label]) => label)
                        .join(', ')}
                    </td>
                    {roleNames.map((role) => (
                      <RoleCell key={role} call={call} role={role} />
                    ))}
                    <td>{present.length === editionNames.length ? 'all' : present.join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))}
    </div>
  );
}
