import { definePlugin } from '@gatehouse/core';
import { bootConnectors, registerConnectors } from './connectors/index';
import * as saml from './saml/index';

/** enterprise edition plugin: SAML single sign-on and container-engine connectors. */
export default definePlugin({
  name: 'enterprise',
  dependsOn: ['community'],
  migrations: new URL('../../migrations/enterprise/', import.meta.url),
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
