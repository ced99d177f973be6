import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const members = join(docsDir, 'content', 'user-guides', 'settings', 'namespace', 'members');

/** The `curl` blocks of a page after `heading`, in order. */
function curlBlocks(file: string, heading: string): string[] {
  const text = readFileSync(join(members, file), 'utf8');
  const from = text.indexOf(heading);
  if (from < 0) throw new Error(`${file} has no "${heading}"`);
  return [...text.slice(from).matchAll(/^```bash\n([\s\S]*?)^```/gm)]
    .map((m) => (m[1] ?? '').trim())
    .filter((block) => block.startsWith('curl '));
}

/**
 * The cloud invitation commands of the members pages, run as written (`curl -f`: an error answer fails them)
 * against a cloud server mailing to a local SMTP server: invite, read the invitation's status, accept it.
 */
describe('docs: the commands of the invite and accept-invite pages (cloud)', function () {
  this.timeout(90_000);
  let smtp: TestSmtp;
  let server: TestServer;
  let owner: LoginAnswer;
  let bob: LoginAnswer;

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({ edition: 'cloud', ssh: false, overrides: { smtp: { url: smtp.url } } });
    owner = await server.setup();
    await server.kernel.container.cradle.users.create({
      name: 'Bob Builder',
      username: 'bob',
      email: 'bob@example.com',
      password: 'bob-secret',
    });
    bob = await server.login('bob', 'bob-secret');
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  const bash = async (block: string, env: Record<string, string>) =>
    (
      await run(
        'bash',
        ['-euo', 'pipefail', '-c', block.replaceAll('https://gatehouse.example.com', server.url)],
        {
          env: { ...process.env, ...env },
        },
      )
    ).stdout;

  it('invites, reads the status and accepts, every call answering with success', async () => {
    const [invite] = curlBlocks('invite.md', '## Cloud edition');
    const [status, accept] = curlBlocks('accept-invite.md', '## Cloud edition');
    expect(invite).to.contain('/members/invites');
    expect(status).to.contain('/accept-invite?sig=');
    expect(accept).to.contain('PATCH');

    const mail = smtp.waitFor('bob@example.com');
    const invited = JSON.parse(await bash(invite as string, { TOKEN: owner.token, TENANT: owner.tenant }));
    const link = new URL(invited.link);
    expect((await mail).text).to.contain(invited.link);
    const env = {
      TENANT: owner.tenant,
      MEMBER: link.searchParams.get('user-id') as string,
      SIG: link.searchParams.get('sig') as string,
      BOB_TOKEN: bob.token,
    };
    expect(JSON.parse(await bash(status as string, env))).to.include({ status: 'pending', account: true });
    await bash(accept as string, env);
    expect(JSON.parse(await bash(status as string, env))).to.include({ status: 'accepted' });
    const ns = await server.api('GET', `/api/namespaces/${owner.tenant}`, { token: owner.token });
    expect(ns.body.members.find((m: { id: string }) => m.id === bob.id)).to.include({ status: 'accepted' });
  });
});
