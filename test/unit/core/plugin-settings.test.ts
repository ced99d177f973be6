import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { definePlugin, type PluginManifest } from '@gatehouse/core';
import { ConfigError, readConfig } from '@gatehouse/core/config/load';
import { pluginSettings } from '@gatehouse/core/config/plugins';
import cloud from '@gatehouse/plugin-cloud';
import community from '@gatehouse/plugin-community';
import enterprise from '@gatehouse/plugin-enterprise';
import { installation } from '@gatehouse/server';
import { Type as T } from '@sinclair/typebox';
import { expect } from 'chai';

/** A file named by GATEHOUSE_CONFIG holding `yaml`. */
function configFile(yaml: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gh-plugin-settings-')), 'gatehouse.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** The settings each plugin of `plugins` gets, read as a kernel reads them. */
function settingsOf(
  plugins: PluginManifest[],
  env: NodeJS.ProcessEnv = {},
  overrides: Record<string, unknown> = {},
): Map<string, Record<string, unknown>> {
  return pluginSettings(readConfig(installation, env, overrides).sections, plugins);
}

const hello = definePlugin({
  name: 'hello',
  dependsOn: [],
  configSchema: T.Object(
    { welcome: T.String({ maxLength: 40, default: 'Welcome,' }), loud: T.Optional(T.Boolean()) },
    { additionalProperties: false },
  ),
  configEnv: { GATEHOUSE_HELLO_LOUD: 'loud' },
  register() {},
});

describe("a plugin's settings", () => {
  it('sit under its own key, from the files, then its variables, then the overrides, defaults filled in', () => {
    const file = configFile('saml:\n  startsPerSource: 7\n  idpEntityId: from-file\n  localLogin: true\n');
    const saml = settingsOf(
      [community, enterprise],
      {
        GATEHOUSE_CONFIG: file,
        GATEHOUSE_SAML_IDP_ENTITY_ID: 'from-env',
        GATEHOUSE_SAML_LOCAL_LOGIN: 'false',
        GATEHOUSE_SAML_ATTRIBUTE_ROLE: 'memberRole',
      },
      { saml: { startsTotal: 9, localLogin: true } },
    ).get('enterprise');
    expect(saml).to.deep.equal({
      startsPerSource: 7,
      startsTotal: 9,
      allowSha1: false,
      idpEntityId: 'from-env',
      localLogin: true,
      attributes: { role: 'memberRole' },
    });
  });

  it('keep the keys and variables they had in core: billing from GATEHOUSE_STRIPE_*', () => {
    const billing = settingsOf([community, enterprise, cloud], {
      GATEHOUSE_STRIPE_SECRET_KEY: 'sk_test_1',
      GATEHOUSE_STRIPE_PLAN: 'price_1',
    }).get('cloud');
    expect(billing).to.deep.equal({ stripeSecretKey: 'sk_test_1', stripePlan: 'price_1' });
    // Without the enterprise plugin the SAML variables are nobody's, and are not read.
    expect(settingsOf([community], { GATEHOUSE_SAML_ALLOW_SHA1: 'maybe' }).get('community')).to.deep.equal(
      {},
    );
  });

  it('sit under pluginConfig.<name> for a plugin without a key of its own, its variables too', () => {
    expect(settingsOf([hello], { GATEHOUSE_HELLO_LOUD: 'yes' }).get('hello')).to.deep.equal({
      welcome: 'Welcome,',
      loud: true,
    });
    const file = configFile('pluginConfig:\n  hello:\n    welcome: Hi,\n');
    expect(settingsOf([hello], { GATEHOUSE_CONFIG: file }).get('hello')).to.deep.equal({ welcome: 'Hi,' });
  });

  it('stop the start with a message naming the plugin, the key and its variable', () => {
    expect(() => settingsOf([community, enterprise], { GATEHOUSE_SAML_IDP_SSO_URL: 'not a url' })).to.throw(
      ConfigError,
      'config: plugin enterprise: saml.idpSsoUrl (GATEHOUSE_SAML_IDP_SSO_URL) must match format "uri"; got "not a url"',
    );
    expect(() => settingsOf([community, enterprise], { GATEHOUSE_SAML_STARTS_TOTAL: 'many' })).to.throw(
      ConfigError,
      'config: plugin enterprise: saml.startsTotal (GATEHOUSE_SAML_STARTS_TOTAL) must be an integer; got "many"',
    );
    expect(() =>
      settingsOf([community, enterprise], {}, { saml: { idpSsoURL: 'https://idp.example.org' } }),
    ).to.throw(
      ConfigError,
      /^config: plugin enterprise: saml must NOT have additional properties \(unknown key "idpSsoURL"\)/,
    );
    const long = configFile(`pluginConfig:\n  hello:\n    welcome: ${'x'.repeat(41)}\n`);
    expect(() => settingsOf([hello], { GATEHOUSE_CONFIG: long })).to.throw(
      ConfigError,
      /^config: plugin hello: pluginConfig\.hello\.welcome must NOT have more than 40 characters/,
    );
  });

  it('refuse a top-level key that neither core nor a running plugin reads', () => {
    const file = configFile('saml:\n  idpEntityId: https://idp.example.org\n');
    expect(() => settingsOf([community], { GATEHOUSE_CONFIG: file })).to.throw(
      ConfigError,
      'config: unknown key "saml": no setting of core or of the plugins that run (community) has that name',
    );
    expect(() => settingsOf([community, enterprise], { GATEHOUSE_CONFIG: file })).not.to.throw();
  });

  it('refuse a manifest whose key or variables another owner has, or that its schema lacks', () => {
    const withSettings = (over: Partial<PluginManifest>) =>
      definePlugin({ ...hello, name: 'other', ...over } as PluginManifest);
    expect(() => settingsOf([withSettings({ configKey: 'http' })])).to.throw(
      ConfigError,
      'plugin other: configKey "http" must be a top-level key of its own',
    );
    expect(() =>
      settingsOf([community, enterprise, withSettings({ configKey: 'saml', configEnv: {} })]),
    ).to.throw(ConfigError, 'plugins enterprise and other both read the settings under "saml"');
    expect(() => settingsOf([withSettings({ configEnv: { GATEHOUSE_HTTP_PORT: 'welcome' } })])).to.throw(
      ConfigError,
      'core and plugin other both read GATEHOUSE_HTTP_PORT',
    );
    expect(() => settingsOf([hello, withSettings({})])).to.throw(
      ConfigError,
      'plugin hello and plugin other both read GATEHOUSE_HELLO_LOUD',
    );
    expect(() => settingsOf([withSettings({ configEnv: { HELLO_LOUD: 'loud' } })])).to.throw(
      ConfigError,
      'plugin other: configEnv names HELLO_LOUD; variables start with GATEHOUSE_',
    );
    expect(() => settingsOf([withSettings({ configEnv: { GATEHOUSE_OTHER_QUIET: 'quiet' } })])).to.throw(
      ConfigError,
      'plugin other: configEnv GATEHOUSE_OTHER_QUIET sets "quiet", which its configSchema has no key for',
    );
  });
});
