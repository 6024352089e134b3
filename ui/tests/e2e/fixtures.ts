/** Playwright fixtures: one real stack per worker (tests run serially in one worker). */
import { test as base, expect, type Page } from '@playwright/test';
import { Stack } from './stack';
import { handToken } from './token';

export const test = base.extend<object, { stack: Stack }>({
  stack: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const stack = await new Stack().start();
      try {
        await use(stack);
      } finally {
        await stack.stop();
      }
    },
    { scope: 'worker', timeout: 360_000 },
  ],
});

export { expect };

/** Open a screen and wait until the gateway connection is live. */
export async function openScreen(page: Page, stack: Stack, name: string, token?: string): Promise<void> {
  if (token) await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/screen/${name}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
}

/** The value element of the first widget of `type` bound to `uri`. */
export function widget(page: Page, type: string, uri: string) {
  return page.locator(`[data-widget="${type}"][data-channel="${uri}"]`).first();
}
