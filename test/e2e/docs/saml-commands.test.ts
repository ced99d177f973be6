import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../support/process-server';
import { TestIdp } from '../../support/saml-idp';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const saml = join(docsDir, 'content', 'admin-guides', 'authentication', 'saml');

/** The shell blocks of a SAML page, in order. */
function blocks(page: string): string[] {
  const text = readFileSync(join(saml, page), 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)].map((m) => (m[1] ?? '').trim());
}

/**
 * The SAML pages' commands, run as written (curl with -f, so an error answer fails them; bash with pipefail) against
 * an enterprise server at the pages' host, in a directory holding the files the pages say you have (the IdP's
 * metadata and certificate): a reader who follows them turns SAML on, signs requests and turns it off.
 */
describe('docs: the commands of the SAML pages', function () {
  this.timeout(90_000);
  let server: TestServer;
  let admin: LoginAnswer;
  let dir: string;
  const idp = new TestIdp();

  before(async () => {
    const port = await freePort();
    server = await startServer({
      edition: 'enterprise',
      ssh: false,
      overrides: { http: { port, host: '127.0.0.1' }, publicUrl: `http://127.0.0.1:${port}` },
    });
    admin = await server.setup();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-saml-docs-'));
    writeFileSync(join(dir, 'idp-metadata.xml'), idp.metadata());
    writeFileSync(join(dir, 'idp.crt'), idp.keys.cert);
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const sh = async (block: string) => {
    const command = block
      .replaceAll('https://gatehouse.example.com', server.url)
      .replaceAll('data/gatehouse.sock', join(server.dataDir, 'gatehouse.sock'));
    const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', command], {
      cwd: dir,
      env: { ...process.env, TOKEN: admin.token },
    });
    return stdout;
  };
  const view = async () => (await server.api('GET', '/api/admin/saml', { token: admin.token })).body;

  it('enabling with metadata: fetch the SP metadata, give the IdP metadata, check /info', async () => {
    const [fetchSp, put, check, ...rest] = blocks('configuring/enabling-with-metadata.md');
    expect(rest).to.deep.equal([]);
    await sh(fetchSp as string);
    expect(readFileSync(join(dir, 'gatehouse-sp.xml'), 'utf8')).to.include('/api/user/saml/acs');
    await sh(put as string);
    expect(JSON.parse(await sh(check as string)).authentication).to.deep.equal({ local: true, saml: true });
    expect((await view()).idp.entity_id).to.equal(idp.entityId);
  });

  it('enabling by hand: entity ID, sign-in address and certificate', async () => {
    const [put, ...rest] = blocks('configuring/enabling-manual.md');
    expect(rest).to.deep.equal([]);
    await sh(put as string);
    expect((await view()).idp).to.deep.equal({
      entity_id: 'https://idp.example.com/saml',
      sso_url: 'https://idp.example.com/saml/sso',
      slo_url: '',
      certificates: 1,
    });
  });

  it('signed requests: make the key, give it, see it in the metadata and the sign-in address', async () => {
    const [keygen, put, check, ...rest] = blocks('signed_authn_requests.md');
    expect(rest).to.deep.equal([]);
    await sh(keygen as string);
    await sh(put as string);
    expect((await sh(check as string)).trim()).to.equal('1');
    const url = new URL((await server.api('GET', '/api/user/saml/auth')).body.url);
    expect(url.searchParams.has('Signature')).to.equal(true);
    expect((await view()).sp_private_key_set).to.equal(true);
  });

  it("disabling through the data directory's local socket gives password sign-in back", async () => {
    await server.api('PUT', '/api/admin/saml', {
      token: admin.token,
      body: { enabled: true, idp_metadata_xml: idp.metadata(), local_login: false },
    });
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: false,
      saml: true,
    });
    const [off, ...rest] = blocks('configuring/disabling.md');
    expect(rest).to.deep.equal([]);
    await sh(off as string);
    expect((await server.api('GET', '/info')).body.authentication).to.deep.equal({
      local: true,
      saml: false,
    });
  });
});
