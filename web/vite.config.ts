import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { sharedModulesPlugin } from './shared-modules';

// Plugin console modules (plugins/*/web, and outside plugins' prebuilt ones) are built apart (see
// @gatehouse/console/vite) and served by the Gatehouse server; the dev server passes their requests on to it.
const server = 'http://localhost:8080';

export default defineConfig({
  plugins: [react(), sharedModulesPlugin()],
  server: {
    proxy: {
      '/api': server,
      '/info': server,
      '/openapi': server,
      '/console/plugins': server,
      '/ws': { target: server, ws: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
});
