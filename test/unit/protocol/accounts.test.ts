import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  crypt,
  parsePasswd,
  passwordMatchesHash,
  shadowHash,
  verifyLocalPassword,
} from '@gatehouse/protocol/accounts';
import { expect } from 'chai';

// Made with Debian's own tools: `openssl passwd -6 sha-pass` and `mkpasswd -m yescrypt yes-pass`.
const SHA512 =
  '$6$ixjVT28AOALyU538$YbZwxFSHaLMj0qAOaP3YLSwHeROVYtDBuEnwL6/V.PD3nXqyoWJXmhBVD1kHAxPxt5PPZACIaGF3uH1JnUv5l.';
const YESCRYPT = '$y$j9T$su5twMH90lI/PaTO22vzV0$sg8q4s0kZx9kXT3sUJY62gmmfPVcIwFJ7MaPw0Gpst2';

describe('agent/ssh local accounts', () => {
  it('matches sha512-crypt and yescrypt hashes made by openssl and mkpasswd', async () => {
    expect(await passwordMatchesHash('sha-pass', SHA512)).to.equal(true);
    expect(await passwordMatchesHash('yes-pass', YESCRYPT)).to.equal(true);
    expect(await passwordMatchesHash('sha-pass ', SHA512)).to.equal(false);
    expect(await passwordMatchesHash('Yes-pass', YESCRYPT)).to.equal(false);
  });

  it('reproduces a known sha512-crypt value', async () => {
    // `openssl passwd -6 -salt abc secret`
    expect(await crypt('secret', '$6$abc$')).to.equal(
      '$6$abc$IdWKNKTJEb8LxY7CGg8YBXlvtfZzFw7Mp/r6niK9YB2mdvgY..TKjv1T..8RadRt2qvUHYRLr/TsVArtr91iR1',
    );
  });

  it('never lets a locked, disabled or empty hash through', async () => {
    for (const hash of ['', '!', '*', `!${SHA512}`, '!*', 'garbage']) {
      expect(await passwordMatchesHash('', hash), hash).to.equal(false);
      expect(await passwordMatchesHash('sha-pass', hash), hash).to.equal(false);
    }
  });

  it('parses /etc/passwd rows', () => {
    const rows = parsePasswd(
      'root:x:0:0:root:/root:/bin/bash\n# comment\nbad line\nalice:x:1000:1000::/home/alice:\n',
    );
    expect(rows).to.deep.equal([
      { name: 'root', uid: 0, gid: 0, home: '/root', shell: '/bin/bash' },
      { name: 'alice', uid: 1000, gid: 1000, home: '/home/alice', shell: '/bin/sh' },
    ]);
  });

  it('checks a user against passwd and shadow files and answers the account', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-accounts-'));
    try {
      const passwd = join(dir, 'passwd');
      const shadow = join(dir, 'shadow');
      writeFileSync(
        passwd,
        'ana:x:1001:1001::/home/ana:/bin/bash\nbo:x:1002:1002::/home/bo:/bin/sh\ncy:x:1003:1003::/home/cy:/bin/sh\n',
      );
      // cy's account expired on day 19000 (2022-01-08).
      writeFileSync(
        shadow,
        `ana:${YESCRYPT}:19000:0:99999:7:::\nbo:!${SHA512}:19000:0:99999:7:::\ncy:${SHA512}:19000:0:99999:7::19000:\n`,
      );
      const paths = { passwd, shadow };
      expect(await verifyLocalPassword('ana', 'yes-pass', paths)).to.deep.include({ name: 'ana', uid: 1001 });
      expect(await verifyLocalPassword('ana', 'nope', paths)).to.equal(undefined);
      expect(await verifyLocalPassword('bo', 'sha-pass', paths)).to.equal(undefined); // locked with !
      expect(await verifyLocalPassword('nobody', 'yes-pass', paths)).to.equal(undefined);
      expect(await verifyLocalPassword('cy', 'sha-pass', paths)).to.equal(undefined); // expired
      expect(await shadowHash('cy', shadow, new Date('2021-12-31T00:00:00Z'))).to.equal(SHA512);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
