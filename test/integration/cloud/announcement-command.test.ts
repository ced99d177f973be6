import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { gatehouse } from '../../support/process';
import { dropDatabase, freshDatabase } from '../../support/server';

/** `gatehouse announcement ...`, contributed by the cloud plugin, as an administrator runs it on the server. */
describe('cloud: the gatehouse announcement command', function () {
  this.timeout(180_000);
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let databaseUrl: string | undefined;
  const run = (...args: string[]) => gatehouse(env, ...args);

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-announce-'));
    databaseUrl = await freshDatabase();
    env = {
      PATH: process.env.PATH,
      GATEHOUSE_EDITION: 'cloud',
      GATEHOUSE_DATA_DIR: dataDir,
      ...(databaseUrl ? { GATEHOUSE_DATABASE_URL: databaseUrl } : {}),
    };
  });
  after(async () => {
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('publishes from a file, lists, edits and withdraws', async () => {
    const file = path.join(dataDir, 'note.md');
    writeFileSync(file, '# Welcome\n\nThe **new** gateway is live.\n');
    const published = await run(
      'announcement',
      'publish',
      '--title',
      'Gateway upgrade',
      '--content-file',
      file,
    );
    expect(published.stderr).to.equal('');
    expect(published.code).to.equal(0);
    const uuid = /^published ([0-9a-f-]{36})$/m.exec(published.stdout)?.[1] as string;
    expect(uuid).to.be.a('string');

    const listed = await run('announcement', 'list');
    expect(listed.stdout).to.match(new RegExp(`^${uuid}\\t\\d{4}-\\d{2}-\\d{2}\\tGateway upgrade$`, 'm'));

    const edited = await run(
      'announcement',
      'edit',
      uuid,
      '--title',
      'Gateway upgraded',
      '--content',
      'Done.',
    );
    expect(edited.code).to.equal(0);
    expect((await run('announcement', 'list')).stdout).to.contain('\tGateway upgraded');

    const tooLong = await run('announcement', 'publish', '--title', 'x'.repeat(91), '--content', 'x');
    expect(tooLong.code).to.equal(1);
    expect(tooLong.stderr).to.contain('title');
    const nothing = await run('announcement', 'edit', uuid);
    expect(nothing.code).to.equal(1);
    expect(nothing.stderr).to.contain('nothing to change');

    expect((await run('announcement', 'withdraw', uuid)).stdout).to.contain(`withdrew ${uuid}`);
    expect((await run('announcement', 'list')).stdout).to.not.contain(uuid);
    const again = await run('announcement', 'withdraw', uuid);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('not found');
  });

  it('is not offered by the community edition', async () => {
    const res = await gatehouse({ ...env, GATEHOUSE_EDITION: 'community' }, 'announcement', 'list');
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/unknown command/);
  });
});
