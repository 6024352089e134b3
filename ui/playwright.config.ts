import { defineConfig } from '@playwright/test';

/** Debian's Chromium, never a downloaded browser; flags keep it off the (closed) network. */
export const chromium = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
};

export default defineConfig({
  testDir: 'tests/e2e',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: chromium,
    viewport: { width: 1400, height: 900 },
    trace: 'off',
  },
});
