import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../agent/config';

const TENANT = '3dd0d1f8-8246-4519-b11a-a3dd33717f65';
const base = {
  GATEHOUSE_SERVER_ADDRESS: 'https://gatehouse.example.com',
  GATEHOUSE_TENANT_ID: TENANT,
  GATEHOUSE_PRIVATE_KEY: '/var/lib/gatehouse/agent.key',
};

describe('agent config', () => {
  it('reads the environment with defaults', () => {
    const config = loadConfig([], base, true);
    expect(config.serverAddress.href).to.equal('https://gatehouse.example.com/');
    expect(config.tenantId).to.equal(TENANT);
    expect(config.keepaliveInterval).to.equal(30);
    expect(config.singleUserPassword).to.equal(undefined);
    expect(config.preferredHostname).to.equal(undefined);
    expect(config.installKey).to.equal(undefined);
  });

  it('reads an install key from GATEHOUSE_INSTALL_KEY or --install-key', () => {
    const key = `gik_0123456789ab_${'f'.repeat(40)}`;
    expect(loadConfig([], { ...base, GATEHOUSE_INSTALL_KEY: ` ${key}\n` }, true).installKey).to.equal(key);
    expect(
      loadConfig(['--install-key', key], { ...base, GATEHOUSE_INSTALL_KEY: 'other' }, true).installKey,
    ).to.equal(key);
  });

  it('lets flags override the environment', () => {
    const config = loadConfig(
      [
        '--keepalive-interval',
        '10',
        '--preferred-hostname',
        'edge-7',
        '--single-user-password',
        ' spaced pw ',
      ],
      { ...base, GATEHOUSE_KEEPALIVE_INTERVAL: '45' },
      true,
    );
    expect(config.keepaliveInterval).to.equal(10);
    expect(config.preferredHostname).to.equal('edge-7');
    expect(config.singleUserPassword).to.equal(' spaced pw ');
  });

  const failures: Array<[string, Record<string, string>, string[], boolean, RegExp]> = [
    ['missing server', { ...base, GATEHOUSE_SERVER_ADDRESS: '' }, [], true, /^GATEHOUSE_SERVER_ADDRESS/],
    [
      'not a URL',
      { ...base, GATEHOUSE_SERVER_ADDRESS: 'gatehouse' },
      [],
      true,
      /GATEHOUSE_SERVER_ADDRESS.*URL/,
    ],
    ['missing tenant', { ...base, GATEHOUSE_TENANT_ID: '' }, [], true, /^GATEHOUSE_TENANT_ID .* required/],
    ['missing key', { ...base, GATEHOUSE_PRIVATE_KEY: '' }, [], true, /^GATEHOUSE_PRIVATE_KEY .* required/],
    [
      'interval text',
      { ...base, GATEHOUSE_KEEPALIVE_INTERVAL: '30s' },
      [],
      true,
      /GATEHOUSE_KEEPALIVE_INTERVAL/,
    ],
    [
      'interval too big',
      { ...base, GATEHOUSE_KEEPALIVE_INTERVAL: '3601' },
      [],
      true,
      /GATEHOUSE_KEEPALIVE_INTERVAL/,
    ],
    [
      'bad identity',
      { ...base, GATEHOUSE_PREFERRED_IDENTITY: 'a b' },
      [],
      true,
      /GATEHOUSE_PREFERRED_IDENTITY/,
    ],
    [
      'bad flag value',
      base,
      ['--tenant-id', 'x'],
      true,
      /GATEHOUSE_TENANT_ID \(--tenant-id\) must be a UUID/,
    ],
    [
      'an install key with spaces',
      { ...base, GATEHOUSE_INSTALL_KEY: 'two words' },
      [],
      true,
      /^GATEHOUSE_INSTALL_KEY \(--install-key\) must be up to 128 printable characters without spaces$/,
    ],
    ['unknown flag', base, ['--tenant', TENANT], true, /Unknown option '--tenant'/],
    ['non-root without password', base, [], false, /^GATEHOUSE_SINGLE_USER_PASSWORD .* does not run as root/],
  ];
  for (const [name, env, argv, isRoot, message] of failures) {
    it(`refuses ${name} with a message naming the setting`, () => {
      expect(() => loadConfig(argv, env, isRoot)).to.throw(ConfigError, message);
    });
  }

  it('accepts a non-root agent in single-user mode', () => {
    const config = loadConfig([], { ...base, GATEHOUSE_SINGLE_USER_PASSWORD: 'pw' }, false);
    expect(config.singleUserPassword).to.equal('pw');
  });
});
