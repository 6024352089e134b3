/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { precompress } from './build/precompress';
import { screenChunks } from './build/screen-chunks';

/** Where `make ui-dev` forwards /ws and /api (the gateway). */
const gateway = process.env.SYNOPTIC_GATEWAY ?? 'http://127.0.0.1:8000';

export default defineConfig({
  base: './',
  plugins: [svelte(), screenChunks(), precompress()],
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 700 },
  server: {
    proxy: {
      '/ws': { target: gateway.replace(/^http/, 'ws'), ws: true },
      '/api': { target: gateway },
    },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts', 'build/**/*.test.ts'],
  },
});
