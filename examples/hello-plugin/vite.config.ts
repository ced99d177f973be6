import { fileURLToPath } from 'node:url';
import { consoleModule } from '@gatehouse/console/vite';
import { defineConfig } from 'vite';

// The console module: web/index.tsx built to dist/console/index.js, React and the kit left to the console.
export default defineConfig(
  consoleModule({
    entry: fileURLToPath(new URL('./web/index.tsx', import.meta.url)),
    outDir: fileURLToPath(new URL('./dist/console', import.meta.url)),
  }),
);
