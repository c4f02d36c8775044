import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { precompress } from './precompress';

const here = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/dashboard', import.meta.url));

/**
 * Served by Tollgate at /dashboard under a Content-Security-Policy that forbids inline code, so
 * the build emits only files: no inline module-preload helper, no inlined assets. Text files are
 * also written brotli- and gzip-compressed, for the server to choose by Accept-Encoding.
 */
export default defineConfig({
  root: here,
  base: '/dashboard/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic' },
  plugins: [precompress(outDir)],
  build: {
    outDir,
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
