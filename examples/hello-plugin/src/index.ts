import { fileURLToPath } from 'node:url';
import { definePlugin } from '@gatehouse/core';
import { helloCommands } from './cli.js';
import { configSchema, register as registerGreetings } from './greetings.js';

/**
 * The hello plugin's manifest: everything the plugin adds is declared here (see docs/content/developers/architecture.md). Gatehouse loads
 * it when a configuration lists it: `plugins: [community, gatehouse-plugin-hello]`.
 */
export default definePlugin({
  name: 'hello',
  dependsOn: ['community'],
  configSchema,
  migrations: new URL('./migrations/', import.meta.url),
  cli: helloCommands,
  // The console screen, prebuilt by `vite build` (vite.config.ts) into dist/console beside this file's build.
  console: { dir: fileURLToPath(new URL('./console', import.meta.url)), entry: 'index.js' },
  register(ctx) {
    registerGreetings(ctx);
  },
});
