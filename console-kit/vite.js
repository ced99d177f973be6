import path from 'node:path';
import react from '@vitejs/plugin-react';
import { sharedModules } from './shared.js';

/**
 * A Vite config that builds a plugin's console module: one ES module entry (its default export is the
 * `defineWebModule(...)` slots) plus the chunks it loads lazily, into a folder the plugin manifest's `console.dir`
 * names. React, react-dom and `@gatehouse/console` stay imports: the console's import map gives the module the
 * console's own copies. Paths are relative to the entry, so the folder works wherever the server serves it.
 *
 * @param {{ entry: string, outDir: string }} options absolute paths of the entry source file and the output folder
 * @returns {import('vite').UserConfig}
 */
export function consoleModule({ entry, outDir }) {
  return {
    root: path.dirname(entry),
    plugins: [react()],
    base: './',
    publicDir: false,
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      modulePreload: { polyfill: false },
      rollupOptions: {
        input: { index: entry },
        external: sharedModules,
        preserveEntrySignatures: 'exports-only',
        output: {
          format: 'es',
          entryFileNames: '[name].js',
          chunkFileNames: 'chunks/[name]-[hash].js',
          assetFileNames: 'assets/[name]-[hash][extname]',
        },
      },
    },
  };
}
