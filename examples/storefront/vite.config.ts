/**
 * The storefront's Vite config. In development `/graphql` (HTTP and WebSocket) and the
 * development sign-in `/auth` are proxied to the API (GRAPHQL_URL, default the embedded server on
 * http://localhost:4000), so the page needs no CORS; a build may instead name the API's URL
 * (VITE_GRAPHQL_URL) on another origin.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const target = new URL(process.env.GRAPHQL_URL ?? 'http://localhost:4000/graphql').origin;

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  envPrefix: 'VITE_',
  server: {
    proxy: {
      '/graphql': { target, ws: true, changeOrigin: true },
      '/auth': { target, changeOrigin: true },
    },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
});
