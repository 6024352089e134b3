/**
 * A token handed to a page as the UI keeps one (the tab's sessionStorage), never in
 * its URL: the stack's gateway has a static key and no provider, so its tokens are
 * made by `Stack.token()` (sign-in with the provider: signin.spec.ts).
 */
import type { Page } from '@playwright/test';

/**
 * The page holds `token` from its next navigation on (before any of its scripts
 * run). A page already showing the app leaves it first, so that the next `goto`
 * loads the app afresh even when only its `#/…` route differs.
 */
export async function handToken(page: Page, token: string): Promise<void> {
  await page.addInitScript((t) => {
    if (location.protocol.startsWith('http')) sessionStorage.setItem('synoptic.token', t);
  }, token);
  if (page.url() !== 'about:blank') await page.goto('about:blank');
}
