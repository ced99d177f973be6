import { definePlugin } from '@gatehouse/core';

/** enterprise edition plugin. */
export default definePlugin({
  name: 'enterprise',
  dependsOn: ['community'],
  migrations: false,
  register() {},
});
