import { defineConfig } from '@playwright/test';
import { chromium } from '../playwright.config';

/** `make bench-ui`: browser benchmarks; the reporter prints only their JSON. */
export default defineConfig({
  testDir: '.',
  testMatch: '*.bench.ts',
  testIgnore: 'wan.bench.ts', // make bench-wan
  workers: 1,
  timeout: 600_000,
  reporter: [['./json-reporter.ts']],
  use: { browserName: 'chromium', launchOptions: chromium, viewport: { width: 1600, height: 1000 } },
});
