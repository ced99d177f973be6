import { fileURLToPath } from 'node:url';
import { consoleModule } from '@gatehouse/console/vite';
import { defineConfig } from 'vite';

// This plugin's console module, built the way an outside plugin's is: the manifest's `console.dir` is ./dist.
export default defineConfig(
  consoleModule({
    entry: fileURLToPath(new URL('./index.ts', import.meta.url)),
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
  }),
);
