import type { TestServer } from '../../support/server';
import type { ReceivedMail, TestSmtp } from '../../support/smtp';

/** The first link of a message to the console page `page` (e.g. `/validation_account`), parsed. */
export function linkIn(mail: ReceivedMail, page: string): URL {
  const found = mail.text.match(/https?:\/\/[^\s"<>]+/g)?.find((u) => new URL(u).pathname === page);
  if (!found) throw new Error(`no ${page} link in: ${mail.text}`);
  return new URL(found.replace(/&amp;/g, '&'));
}

/** How many messages reached the SMTP server once every message the server posted so far went out. */
export async function mailCount(server: TestServer, smtp: TestSmtp): Promise<number> {
  await server.kernel.container.cradle.outbox.drained();
  return smtp.messages.length;
}

/** Signs up through the API and verifies the address with the mailed link; answers the login. */
export async function signUp(
  server: TestServer,
  smtp: TestSmtp,
  username: string,
  email = `${username}@example.com`,
) {
  const mail = smtp.waitFor(email);
  const res = await server.api('POST', '/api/register', {
    body: { name: `${username} name`.slice(0, 20), email, username, password: 'sign-up_Pass1' },
  });
  if (res.status !== 200) throw new Error(`register answered ${res.status}: ${JSON.stringify(res.body)}`);
  const link = linkIn(await mail, '/validation_account');
  const verified = await server.api('GET', `/api/user/validation_account${link.search}`);
  if (verified.status !== 200) throw new Error(`validation answered ${verified.status}`);
  return server.login(username, 'sign-up_Pass1');
}
