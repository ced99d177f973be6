import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { newSecretKey } from '@gatehouse/core';
import { createKernel } from '@gatehouse/server';
import { expect } from 'chai';
import pg from 'pg';
import { totpCode } from '../../plugins/community/mfa/totp';
import { createUser, PASSWORD } from '../integration/accounts/team';
import { startServer, type TestServer } from '../support/server';

const run = promisify(execFile);
const bin = path.resolve('bin/gatehouse.js');

/**
 * A security review, "secrets at rest": MFA secrets and the server's private keys were plain text in the store. They are now
 * sealed with a key the operator holds outside it (the data directory's key file or GATEHOUSE_SECRET_KEY): a dump
 * of the database alone holds none of them and starts no server, plain rows from before are sealed at start, and
 * `gatehouse secrets rotate` changes the key while sign-in keeps working.
 */
(process.env.TEST_DATABASE_URL ? describe : describe.skip)(
  'security: secrets at rest (needs TEST_DATABASE_URL)',
  function () {
    this.timeout(180_000);
    let server: TestServer;
    let totpSecret: string;
    let username: string;

    /** Everything a database dump holds, as pg_dump writes it. */
    async function dump(): Promise<string> {
      const { stdout } = await run('pg_dump', ['--data-only', server.databaseUrl as string], {
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    }

    /** The secrets a dump must not show: the TOTP secret and every instance key, in the forms they are used. */
    function plainSecrets(): string[] {
      const keys = server.kernel.container.cradle.keys;
      const pem = keys.jwtPrivate.export({ type: 'pkcs8', format: 'pem' }).toString();
      return [
        totpSecret,
        pem.split('\n')[1] as string,
        'PRIVATE KEY',
        keys.sshHostKey.split('\n')[1] as string,
        keys.gatewayKey.split('\n')[1] as string,
        keys.secret.toString('base64'),
      ];
    }

    /** Each TOTP time step signs in once (no replay): a step of the accepted window not used yet, waiting if needed. */
    const usedSteps = new Set<number>();
    async function freshCode(): Promise<string> {
      for (;;) {
        const now = Math.floor(Date.now() / 30_000);
        const step = [now - 1, now, now + 1].find((s) => !usedSteps.has(s));
        if (step !== undefined) {
          usedSteps.add(step);
          return totpCode(totpSecret, step * 30 + 1);
        }
        await new Promise((r) => setTimeout(r, 30_000 - (Date.now() % 30_000) + 100));
      }
    }

    async function signInWithMfa(s: TestServer): Promise<number> {
      const first = await s.api('POST', '/api/login', { body: { username, password: PASSWORD } });
      expect(first.status).to.equal(401);
      const token = first.headers.get('x-mfa-token') as string;
      const next = await s.api('POST', '/api/user/mfa/auth', { body: { token, code: await freshCode() } });
      return next.status;
    }

    let admin: string;

    before(async () => {
      server = await startServer({ ssh: false });
      admin = (await server.setup()).token;
      username = 'sealed-mfa';
      const me = await createUser(server, username);
      await server.api('PATCH', '/api/users', {
        token: me.token,
        body: { recovery_email: 'sealed@backup.example' },
      });
      const gen = await server.api('GET', '/api/user/mfa/generate', { token: me.token });
      totpSecret = gen.body.secret;
      const enabled = await server.api('PUT', '/api/user/mfa/enable', {
        token: me.token,
        body: { code: await freshCode(), secret: totpSecret, recovery_codes: gen.body.recovery_codes },
      });
      expect(enabled.status).to.equal(200);
    });
    after(async () => {
      await server?.stop();
    });

    it('keeps the MFA secret and every private key out of a database dump', async () => {
      const text = await dump();
      expect(text).to.include(username, 'the dump is a real one');
      for (const secret of plainSecrets()) expect(text).to.not.include(secret);
      expect(text).to.match(/gh1:[0-9a-f]{12}:/);
    });

    it('starts no server from the dump alone: without the key it refuses, saying why', async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-nokey-'));
      const kernel = await createKernel({
        env: {},
        ssh: false,
        http: false,
        overrides: {
          dataDir,
          database: { url: server.databaseUrl, poolMax: 2 },
          log: { level: 'silent', pretty: false },
        },
      });
      try {
        // openStore lets go of the store itself when it cannot open it.
        const failure = await kernel.openStore().then(
          () => undefined,
          (e: Error) => e,
        );
        expect(failure?.message).to.match(/secrets are encrypted, but there is no key/);
        const wrong = await createKernel({
          env: {},
          ssh: false,
          http: false,
          overrides: {
            dataDir,
            database: { url: server.databaseUrl, poolMax: 2 },
            secrets: { key: newSecretKey() },
            log: { level: 'silent', pretty: false },
          },
        });
        const refused = await wrong.openStore().then(
          () => undefined,
          (e: Error) => e,
        );
        expect(refused?.message, 'another key').to.match(/do not open the store's secrets/);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('seals plain rows left from before at start, and signs in with them', async () => {
      // The store as an older server left it: the MFA secret and the instance keys in plain text.
      const cradle = server.kernel.container.cradle;
      const client = new pg.Client({ connectionString: server.databaseUrl });
      await client.connect();
      try {
        await client.query('update users set mfa_secret = $1 where username = $2', [totpSecret, username]);
        const pem = cradle.keys.jwtPrivate.export({ type: 'pkcs8', format: 'pem' }).toString();
        await client.query(`update system_keys set value = $1 where name = 'jwt'`, [pem]);
        await client.query(`update system_keys set value = $1 where name = 'ssh-host'`, [
          cradle.keys.sshHostKey,
        ]);
      } finally {
        await client.end();
      }
      // Another instance of the installation starts and seals them.
      const other = await startServer({ ssh: false, sharing: server });
      try {
        expect(other.kernel.container.cradle.keys.sshHostKey).to.equal(cradle.keys.sshHostKey);
        const text = await dump();
        for (const secret of plainSecrets()) expect(text).to.not.include(secret);
        expect(await signInWithMfa(other)).to.equal(200);
      } finally {
        await other.stop();
      }
    });

    it('rotates the key with `gatehouse secrets rotate` beside the running server; sign-in keeps working', async () => {
      const keyFile = path.join(server.dataDir, 'secret.key');
      const before = readFileSync(keyFile, 'utf8');
      const oldId = server.kernel.container.cradle.secrets.currentKeyId;
      const { stdout } = await run(process.execPath, [bin, 'secrets', 'rotate'], {
        env: { ...process.env, GATEHOUSE_DATA_DIR: server.dataDir, GATEHOUSE_LOG_LEVEL: 'warn' },
      });
      expect(stdout).to.match(/^re-encrypted \d+ secrets with key [0-9a-f]{12} \(was [0-9a-f]{12}\)/);
      const after = readFileSync(keyFile, 'utf8');
      expect(after).to.not.equal(before);
      const newId = server.kernel.container.cradle.secrets.currentKeyId;
      expect(newId).to.not.equal(oldId);
      const text = await dump();
      expect(text).to.not.include(`gh1:${oldId}:`);
      expect(text).to.include(`gh1:${newId}:`);
      for (const secret of plainSecrets()) expect(text).to.not.include(secret);
      // The server that ran the rotation signs in, and so does one started afresh from the key file.
      expect(await signInWithMfa(server)).to.equal(200);
      const other = await startServer({ ssh: false, sharing: server });
      try {
        expect(await signInWithMfa(other)).to.equal(200);
      } finally {
        await other.stop();
      }
    });

    it('runs rotations asked for at once one after the other; every secret still opens', async () => {
      // Two rotations interleaved: the first dropped the old key while the second still had values sealed with it
      // to open (a 500, found by the fuzzer sending the call twice at once).
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          server.api('POST', '/api/admin/secrets/rotate', { token: admin, body: {} }),
        ),
      );
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      const newId = server.kernel.container.cradle.secrets.currentKeyId;
      expect(answers.map((a) => a.body.to)).to.include(newId);
      const sealedWith = new Set((await dump()).match(/gh1:[0-9a-f]{12}:/g));
      expect([...sealedWith]).to.deep.equal([`gh1:${newId}:`]);
      expect(await signInWithMfa(server)).to.equal(200);
      const other = await startServer({ ssh: false, sharing: server });
      try {
        expect(await signInWithMfa(other)).to.equal(200);
      } finally {
        await other.stop();
      }
    });
  },
);
