import { defineConfig } from '@playwright/test';
import { chromium } from '../playwright.config';

/** `make bench-wan`: the demo screens over emulated links; the reporter prints only its JSON. */
export default defineConfig({
  testDir: '.',
  testMatch: 'wan.bench.ts',
  workers: 1,
  timeout: 900_000,
  reporter: [['./json-reporter.ts']],
  use: { browserName: 'chromium', launchOptions: chromium },
});
