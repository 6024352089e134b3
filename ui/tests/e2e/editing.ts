/** Editor steps shared by the editor's end-to-end tests. */
import type { Browser, Page } from '@playwright/test';
import { expect, openScreen } from './fixtures';
import { handToken } from './token';
import type { Stack } from './stack';

/**
 * An editor page for `name` ('' = a new screen, created with the default layout)
 * as a user granted every screen.
 * The channel directory lists the channels the bus knows (the last-value store):
 * the demo screen is viewed first, so that the adapter monitors its channels.
 */
export async function openEditor(page: Page, stack: Stack, name: string, user = 'alice'): Promise<void> {
  await openScreen(page, stack, 'epics-demo');
  await handToken(page, stack.token(user, ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/${name ? `edit/${name}` : 'new'}`);
  if (!name) await page.getByTestId('new-screen').getByRole('button', { name: 'Create' }).click(); // the default: a 12-column grid
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
}

/** Drop a palette item on the canvas at grid cell (x, y) (1-based; 30 px rows + 4 px gap). */
export async function drop(page: Page, type: string, x: number, y: number): Promise<void> {
  const canvas = page.getByTestId('canvas');
  const box = (await canvas.boundingBox())!;
  const pitch = (box.width + 4) / 12;
  await page.locator(`[data-palette="${type}"]`).dragTo(canvas, { targetPosition: { x: (x - 1) * pitch + pitch / 2, y: (y - 1) * 34 + 10 } });
}

/** Bind the selected widget's (next) channel through the picker: type, see the live preview, Enter. */
export async function bind(page: Page, search: string, uri: string): Promise<void> {
  const picker = page.getByRole('combobox', { name: 'add channel' });
  await picker.fill(search);
  await expect(page.getByRole('option', { name: uri, exact: true })).toBeVisible();
  await page.getByRole('option', { name: uri, exact: true }).hover();
  await expect(page.getByTestId('picker-preview')).toContainText(uri);
  await expect(page.getByTestId('picker-preview').locator('[data-role=preview-value]')).not.toHaveText(/^\s*—\s*$/); // live value
  await picker.press('Enter');
}

/** Save with a summary; returns the new revision (the bucket's sequence: it grows, not by one per screen). */
export async function save(page: Page, summary: string, after = 0): Promise<number> {
  await page.getByRole('textbox', { name: 'summary of the change' }).fill(summary);
  await page.getByRole('button', { name: 'Save' }).click();
  return savedRevision(page, after);
}

/** The revision the editor shows as saved, once it is above `after`. */
export async function savedRevision(page: Page, after: number): Promise<number> {
  const state = page.getByTestId('save-state');
  await expect(state).toHaveText(/^saved · revision \d+$/);
  await expect.poll(async () => Number((await state.textContent())!.replace(/\D+/g, ''))).toBeGreaterThan(after);
  return Number((await state.textContent())!.replace(/\D+/g, ''));
}

export async function viewer(browser: Browser, stack: Stack, name: string, token?: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  if (token) await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/screen/${name}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  return page;
}

