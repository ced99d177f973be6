import { definePlugin } from '@gatehouse/core';
import { bootConnectors, registerConnectors } from './connectors/index';
import { samlConfigSchema, samlEnv } from './saml/config';
import * as saml from './saml/index';

/** enterprise edition plugin: SAML single sign-on and container-engine connectors. */
export default definePlugin({
  name: 'enterprise',
  dependsOn: ['community'],
  // Its settings are SAML's, under `saml` with their GATEHOUSE_SAML_* variables.
  configSchema: samlConfigSchema,
  configKey: 'saml',
  configEnv: samlEnv,
  migrations: new URL('./migrations/', import.meta.url),
  console: { dir: new URL('./web/dist/', import.meta.url), entry: 'index.js' },
  register(ctx) {
    saml.register(ctx);
    registerConnectors(ctx);
  },
  async boot(ctx) {
    await saml.boot(ctx);
    await bootConnectors(ctx);
  },
});
