// Stand-ins for the PostgreSQL and Redis images the compose file names, made from this Debian machine's own
// PostgreSQL 15 and Redis 7 (no registry is reachable here), under the same names and with the same settings the
// official images read: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB and the data folder
// /var/lib/postgresql/data; Redis on 6379 with protected mode off and its data in /data.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { copyFile, debianRoot, imageExists, importRoot } from '../../packaging/release/base-images';
import type { Podman } from '../../packaging/release/podman';

export const POSTGRES_IMAGE = 'docker.io/library/postgres:15-bookworm';
export const REDIS_IMAGE = 'docker.io/library/redis:7-bookworm';

const PG = '/usr/lib/postgresql/15';

/** What the official image's entrypoint does for a first start, in busybox sh, then postgres as its user. */
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -e
: "\${PGDATA:=/var/lib/postgresql/data}"
: "\${POSTGRES_USER:=postgres}"
: "\${POSTGRES_DB:=$POSTGRES_USER}"
[ -n "$POSTGRES_PASSWORD" ] || { echo "POSTGRES_PASSWORD is required" >&2; exit 1; }
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"
as_postgres() { su postgres -s /bin/sh -c "$*"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "$POSTGRES_PASSWORD" > /tmp/pwfile
  chown postgres /tmp/pwfile
  as_postgres "initdb -D '$PGDATA' -U '$POSTGRES_USER' --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 --no-locale -E UTF8" >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    as_postgres "pg_ctl -D '$PGDATA' -o '-c listen_addresses=' -w start" >/dev/null
    as_postgres "psql -v ON_ERROR_STOP=1 -U '$POSTGRES_USER' -d postgres -c 'CREATE DATABASE \\"$POSTGRES_DB\\"'" >/dev/null
    as_postgres "pg_ctl -D '$PGDATA' -m fast -w stop" >/dev/null
  fi
fi
exec su postgres -s /bin/sh -c "exec postgres -D '$PGDATA' -c listen_addresses='*'"
`;

async function postgresImage(podman: Podman, work: string): Promise<void> {
  const root = path.join(work, 'postgres');
  const programs = ['postgres', 'initdb', 'pg_ctl', 'psql', 'pg_isready'].map((p) => path.join(PG, 'bin', p));
  const modules = readdirSync(path.join(PG, 'lib'))
    .filter((f) => f.endsWith('.so'))
    .map((f) => path.join(PG, 'lib', f));
  debianRoot(root, [...programs, ...modules]);
  cpSync(path.join(PG, 'lib'), path.join(root, PG, 'lib'), { recursive: true, dereference: true });
  for (const program of programs) copyFile(root, program);
  cpSync('/usr/share/postgresql/15', path.join(root, 'usr/share/postgresql/15'), {
    recursive: true,
    dereference: true,
  });
  cpSync('/usr/share/zoneinfo', path.join(root, 'usr/share/zoneinfo'), {
    recursive: true,
    dereference: true,
  });
  const append = (file: string, text: string) =>
    writeFileSync(path.join(root, file), `${readFileSync(path.join(root, file), 'utf8')}${text}`);
  append('etc/passwd', 'postgres:x:999:999::/var/lib/postgresql:/bin/sh\n');
  append('etc/group', 'postgres:x:999:\n');
  mkdirSync(path.join(root, 'var/lib/postgresql/data'), { recursive: true });
  const entry = path.join(root, 'usr/local/bin/docker-entrypoint.sh');
  writeFileSync(entry, POSTGRES_ENTRYPOINT);
  chmodSync(entry, 0o755);
  await importRoot(podman, root, POSTGRES_IMAGE, [
    'LABEL dev.gatehouse.stand-in=postgres-15-from-this-machine',
    `ENV PATH=${PG}/bin:/usr/local/bin:/usr/bin:/bin PGDATA=/var/lib/postgresql/data`,
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
    'CMD ["postgres"]',
    'STOPSIGNAL SIGINT',
    'EXPOSE 5432',
  ]);
}

async function redisImage(podman: Podman, work: string): Promise<void> {
  const root = path.join(work, 'redis');
  debianRoot(root, ['/usr/bin/redis-server']);
  copyFile(root, '/usr/bin/redis-server', '/usr/local/bin/redis-server');
  mkdirSync(path.join(root, 'data'), { recursive: true });
  await importRoot(podman, root, REDIS_IMAGE, [
    'LABEL dev.gatehouse.stand-in=redis-7-from-this-machine',
    'WORKDIR /data',
    'CMD ["redis-server", "--protected-mode", "no"]',
    'EXPOSE 6379',
  ]);
}

/** Makes whichever stand-in is missing from the store. */
export async function ensureServiceImages(podman: Podman): Promise<void> {
  if (!existsSync(path.join(PG, 'bin', 'postgres')) || !existsSync('/usr/bin/redis-server')) {
    throw new Error('the stand-ins need Debian packages postgresql-15 and redis-server on this machine');
  }
  const work = mkdtempSync(path.join(tmpdir(), 'gatehouse-services-'));
  try {
    if (!(await imageExists(podman, POSTGRES_IMAGE))) await postgresImage(podman, work);
    if (!(await imageExists(podman, REDIS_IMAGE))) await redisImage(podman, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
