import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';

describe('cloud: announcements', function () {
  this.timeout(90_000);
  let server: TestServer;
  let admin: LoginAnswer;
  before(async () => {
    server = await startServer({ edition: 'cloud', ssh: false });
    admin = await server.setup();
  });
  after(async () => {
    await server?.stop();
  });

  const publish = (body: unknown, token = admin.token) =>
    server.api('POST', '/api/admin/announcements', { token, body });

  it('lets instance administrators publish, edit and withdraw; anyone reads, without signing in', async () => {
    const made = await publish({
      title: 'Maintenance on Sunday',
      content: 'The **gateway** restarts at 02:00 UTC.',
    });
    expect(made.status).to.equal(200);
    expect(made.body.uuid).to.match(/^[0-9a-f-]{36}$/);
    expect(made.body.html).to.equal('<p>The <strong>gateway</strong> restarts at 02:00 UTC.</p>\n');
    const read = await server.api('GET', `/api/announcements/${made.body.uuid}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.include({
      title: 'Maintenance on Sunday',
      content: 'The **gateway** restarts at 02:00 UTC.',
    });

    const edited = await server.api('PATCH', `/api/admin/announcements/${made.body.uuid}`, {
      token: admin.token,
      body: { title: 'Maintenance moved to Monday' },
    });
    expect(edited.status).to.equal(200);
    expect(edited.body).to.include({ title: 'Maintenance moved to Monday', date: made.body.date });

    const withdrawn = await server.api('DELETE', `/api/admin/announcements/${made.body.uuid}`, {
      token: admin.token,
    });
    expect(withdrawn.status).to.equal(200);
    expect((await server.api('GET', `/api/announcements/${made.body.uuid}`)).status).to.equal(404);
    expect(
      (await server.api('DELETE', `/api/admin/announcements/${made.body.uuid}`, { token: admin.token }))
        .status,
    ).to.equal(404);
  });

  it('pages the short form by date, in either order, with X-Total-Count', async () => {
    const db = server.kernel.container.cradle.db;
    await db('announcements').delete();
    const uuids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const made = await publish({ title: `Note ${i}`, content: `number ${i}` });
      uuids.push(made.body.uuid);
      await db('announcements')
        .where({ uuid: made.body.uuid })
        .update({ date: new Date(Date.UTC(2026, 0, i)) });
    }
    const newest = await server.api('GET', '/api/announcements?per_page=2');
    expect(newest.status).to.equal(200);
    expect(newest.headers.get('x-total-count')).to.equal('3');
    expect(newest.body.map((a: { title: string }) => a.title)).to.deep.equal(['Note 3', 'Note 2']);
    expect(Object.keys(newest.body[0]).sort()).to.deep.equal(['date', 'title', 'uuid']);
    const second = await server.api('GET', '/api/announcements?per_page=2&page=2');
    expect(second.body.map((a: { title: string }) => a.title)).to.deep.equal(['Note 1']);
    const oldest = await server.api('GET', '/api/announcements?order_by=asc&per_page=1');
    expect(oldest.body.map((a: { uuid: string }) => a.uuid)).to.deep.equal([uuids[0]]);
    expect((await server.api('GET', '/api/announcements?per_page=101')).status).to.equal(400);
    expect((await server.api('GET', '/api/announcements?order_by=sideways')).status).to.equal(400);
  });

  it('keeps titles to 90 characters and renders hostile Markdown harmless', async () => {
    const long = await publish({ title: 'x'.repeat(91), content: 'too long a title' });
    expect(long.status).to.equal(400);
    expect(long.body).to.deep.equal(['title']);
    expect((await publish({ title: 'x'.repeat(90), content: 'fits' })).status).to.equal(200);
    const hostile = await publish({
      title: 'Hostile',
      content: [
        '<script>alert(1)</script>',
        '<img src="https://example.com/a.png" onerror="alert(2)">',
        '[click](javascript:alert(3)) and [docs](https://docs.example.com)',
        '<iframe src="https://evil.example"></iframe><style>body{display:none}</style>',
        '<a href="https://example.com" onclick="alert(4)">x</a>',
      ].join('\n\n'),
    });
    expect(hostile.status).to.equal(200);
    const html = hostile.body.html as string;
    for (const bad of ['<script', 'onerror', 'javascript:', '<iframe', '<style', 'onclick', 'alert(1)'])
      expect(html).to.not.contain(bad);
    expect(html).to.contain('<img src="https://example.com/a.png" />');
    expect(html).to.contain(
      '<a href="https://docs.example.com" rel="noopener noreferrer nofollow" target="_blank">docs</a>',
    );
  });

  it('refuses publishing to anyone but an instance administrator', async () => {
    await server.kernel.container.cradle.users.create({
      name: 'Plain User',
      username: 'plain',
      email: 'plain@example.com',
      password: 'plain-pass',
    });
    const plain = await server.login('plain', 'plain-pass');
    expect((await publish({ title: 'Nope', content: 'no' }, plain.token)).status).to.equal(403);
    expect(
      (await server.api('POST', '/api/admin/announcements', { body: { title: 'a', content: 'b' } })).status,
    ).to.equal(401);
  });

  it('remembers on the server, per user, which announcement each has seen', async () => {
    const made = await publish({ title: 'Seen once', content: 'per user' });
    const uuid = made.body.uuid as string;
    const plain = await server.login('plain', 'plain-pass');
    const seen = (token?: string) => server.api('GET', `/api/announcements/${uuid}/seen`, { token });
    expect((await seen(admin.token)).body).to.deep.equal({ seen: false });
    expect((await seen(plain.token)).body).to.deep.equal({ seen: false });

    const marked = await server.api('PUT', `/api/announcements/${uuid}/seen`, { token: plain.token });
    expect(marked.status).to.equal(200);
    expect(marked.body).to.deep.equal({ seen: true });
    // Another sign-in of the same person (another browser) knows; the other user does not.
    const again = await server.login('plain', 'plain-pass');
    expect((await seen(again.token)).body).to.deep.equal({ seen: true });
    expect((await seen(admin.token)).body).to.deep.equal({ seen: false });
    // Saying so twice changes nothing.
    expect(
      (await server.api('PUT', `/api/announcements/${uuid}/seen`, { token: again.token })).status,
    ).to.equal(200);
    const db = server.kernel.container.cradle.db;
    expect(await db('announcement_reads').where({ announcement_uuid: uuid })).to.have.length(1);

    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(
      (await server.api('PUT', `/api/announcements/${unknown}/seen`, { token: plain.token })).status,
    ).to.equal(404);
    expect(
      (await server.api('GET', `/api/announcements/${unknown}/seen`, { token: plain.token })).status,
    ).to.equal(404);
    expect(
      (await server.api('GET', `/api/announcements/not-a-uuid/seen`, { token: plain.token })).status,
    ).to.equal(400);
    expect((await seen()).status).to.equal(401);
    expect((await server.api('PUT', `/api/announcements/${uuid}/seen`)).status).to.equal(401);

    // Withdrawn, its reads go with it.
    expect(
      (await server.api('DELETE', `/api/admin/announcements/${uuid}`, { token: admin.token })).status,
    ).to.equal(200);
    expect(await db('announcement_reads').where({ announcement_uuid: uuid })).to.have.length(0);
  });
});
