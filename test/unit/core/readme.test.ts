import { readFileSync } from 'node:fs';
import { bundledPlugins } from '@gatehouse/server';
import { expect } from 'chai';
import { envKeys } from '../../../core/config/schema';

describe('README', () => {
  const readme = readFileSync('README.md', 'utf8');

  it("documents every configuration variable, core's and each bundled plugin's", async () => {
    const plugins = await Promise.all(Object.values(bundledPlugins).map((load) => load()));
    const pluginVariables = plugins.flatMap((p) => Object.keys(p.configEnv ?? {}));
    expect(pluginVariables).to.include.members([
      'GATEHOUSE_SAML_IDP_METADATA_URL',
      'GATEHOUSE_STRIPE_SECRET_KEY',
    ]);
    for (const name of [...Object.keys(envKeys), ...pluginVariables, 'GATEHOUSE_CONFIG'])
      expect(readme, name).to.include(`\`${name}\``);
  });

  it('gives the set-up, start and test commands', () => {
    for (const cmd of ['npm install', 'npm start', 'npm test']) expect(readme).to.include(cmd);
  });
});
