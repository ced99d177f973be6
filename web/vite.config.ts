import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Plugin web modules live outside web/ (plugins/*/web), so the dev server may read the repository root.
const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));
const server = 'http://localhost:8080';

export default defineConfig({
  plugins: [react()],
  resolve: { dedupe: ['react', 'react-dom'] },
  server: {
    fs: { allow: [repositoryRoot] },
    proxy: {
      '/api': server,
      '/info': server,
      '/openapi': server,
      '/ws': { target: server, ws: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
});
