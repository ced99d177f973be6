import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '@gatehouse/core/config/load';
import { loadConfig } from '@gatehouse/server';
import { expect } from 'chai';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.edition).to.equal('community');
    expect(c.plugins).to.deep.equal(['community']);
    expect(c.http.port).to.equal(8080);
    expect(c.ssh.port).to.equal(2222);
    expect(c.dataDir).to.equal(path.resolve('./data'));
    expect(c.database.url).to.equal(undefined);
    expect(c.redis.url).to.equal(undefined);
    expect(c.publicUrl).to.equal('http://localhost:8080');
  });

  it('takes the edition file, then GATEHOUSE_CONFIG, then the environment', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-config-'));
    const extra = path.join(dir, 'extra.yaml');
    writeFileSync(extra, 'http:\n  port: 9000\nssh:\n  port: 2022\n');
    const c = loadConfig({ GATEHOUSE_EDITION: 'cloud', GATEHOUSE_CONFIG: extra, GATEHOUSE_SSH_PORT: '2200' });
    expect(c.plugins).to.deep.equal(['community', 'enterprise', 'cloud']);
    expect(c.limits.maxDevices).to.equal(3);
    expect(c.http.port).to.equal(9000);
    expect(c.ssh.port).to.equal(2200);
    expect(c.publicUrl).to.equal('http://localhost:9000');
  });

  it('keeps the public URL without a trailing slash, so links made from it never double one', () => {
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://gate.example.com/' }).publicUrl).to.equal(
      'https://gate.example.com',
    );
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://example.com/gatehouse//' }).publicUrl).to.equal(
      'https://example.com/gatehouse',
    );
  });

  it('stops on an invalid value with a message naming the key and its variable', () => {
    expect(() => loadConfig({ GATEHOUSE_HTTP_PORT: 'eighty' })).to.throw(
      ConfigError,
      /http\.port \(GATEHOUSE_HTTP_PORT\)/,
    );
    expect(() => loadConfig({ GATEHOUSE_SSH_PORT: '70000' })).to.throw(
      ConfigError,
      /ssh\.port \(GATEHOUSE_SSH_PORT\)/,
    );
    expect(() => loadConfig({ GATEHOUSE_EDITION: 'deluxe' })).to.throw(ConfigError, /GATEHOUSE_EDITION/);
    expect(() => loadConfig({ GATEHOUSE_PUBLIC_URL: 'not a url' })).to.throw(ConfigError, /publicUrl/);
    expect(() => loadConfig({ GATEHOUSE_TRUST_PROXY: 'maybe' })).to.throw(ConfigError, /http\.trustProxy/);
    expect(() => loadConfig({ GATEHOUSE_CONFIG: '/nonexistent/gatehouse.yaml' })).to.throw(
      ConfigError,
      /GATEHOUSE_CONFIG/,
    );
  });

  it('refuses unknown keys in a config file, naming them', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-config-'));
    const extra = path.join(dir, 'extra.yaml');
    writeFileSync(extra, 'htp:\n  port: 9000\n');
    expect(() => loadConfig({ GATEHOUSE_CONFIG: extra })).to.throw(ConfigError, /unknown key "htp"/);
  });
});
