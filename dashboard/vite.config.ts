import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * Served by Tollgate at /dashboard under a Content-Security-Policy that forbids inline code, so
 * the build emits only files: no inline module-preload helper, no inlined assets.
 */
export default defineConfig({
  root: here,
  base: '/dashboard/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
