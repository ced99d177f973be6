import { definePlugin } from '@gatehouse/core';

/** cloud edition plugin. */
export default definePlugin({
  name: 'cloud',
  dependsOn: ['community'],
  migrations: false,
  register() {},
});
