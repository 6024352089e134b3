/**
 * The demo screens on a phone and a tablet (Playwright's device profiles, in
 * Chromium): grid screens reflow below 640 px; no control is clipped by its cell
 * or the page, no value is cut (nor, on a phone, a caption), and the page never
 * scrolls sideways. Chart tick labels are drawn on canvas: axes drop overlapping
 * ones (ECharts hideOverlap), gauges get as many ticks as their dial has room for
 * (charts/ticks.ts, unit-tested).
 */
import { devices, type Page } from '@playwright/test';
import { expect, openScreen, test } from './fixtures';

/** Viewport, scale, touch and user agent of a profile (the browser stays Chromium). */
function profile(name: string) {
  const { viewport, deviceScaleFactor, isMobile, hasTouch, userAgent } = devices[name];
  return { viewport, deviceScaleFactor, isMobile, hasTouch, userAgent };
}

const PROFILES = { phone: profile('Pixel 7'), tablet: profile('iPad (gen 7)') };

/**
 * What is cut or clipped on the page: a list of descriptions (empty: nothing).
 * `captions`: also captions shown whole (a tablet keeps a screen's own columns, so a
 * narrow column's caption may end in an ellipsis, its full name in the tooltip).
 */
async function problems(page: Page, captions: boolean): Promise<string[]> {
  return page.evaluate((captions) => {
    const out: string[] = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1) out.push(`page ${doc.scrollWidth} px wide in a ${window.innerWidth} px viewport`);
    const name = (el: Element) => `${el.closest('.cell')?.getAttribute('data-widget')} ${el.closest('.cell')?.getAttribute('data-channel') ?? ''} ${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 30)}"`;
    for (const el of document.querySelectorAll('.grid .cell :is(input, button, select)')) {
      // within a scrolling part of a widget (a wide form's columns): reachable, not clipped
      const scroller = el.parentElement?.closest('.w-form, .w-table');
      const cell = (scroller ?? el.closest('.cell')!).getBoundingClientRect();
      if (scroller && scroller.scrollWidth > scroller.clientWidth) continue;
      const r = el.getBoundingClientRect();
      if (r.width < 8 || r.height < 8) out.push(`${name(el)}: ${r.width}x${r.height}`);
      else if (r.left < cell.left - 1 || r.right > cell.right + 1 || r.top < cell.top - 1 || r.bottom > cell.bottom + 1) out.push(`${name(el)} clipped by its cell`);
      else if (r.right > window.innerWidth + 1) out.push(`${name(el)} beyond the viewport`);
    }
    // captions and values shown whole (no ellipsis, nothing cut)
    // (a disconnected channel's value says so by its dashed, struck-through look too)
    const values = '.grid [data-role=value]:not(.sev-disconnected)';
    for (const el of document.querySelectorAll(captions ? `.grid .cell > header, ${values}` : values)) {
      const e = el as HTMLElement;
      if (e.offsetParent && e.scrollWidth > e.clientWidth + 1) out.push(`${name(el)} cut (${e.scrollWidth} > ${e.clientWidth})`);
    }
    return out;
  }, captions);
}

for (const [kind, device] of Object.entries(PROFILES)) {
  test.describe(kind, () => {
    test.use(device);
    for (const screen of ['epics-demo', 'tango-demo', 'counters']) {
      test(`${screen}: nothing clipped, nothing cut, no sideways scroll`, async ({ page, stack }) => {
        await openScreen(page, stack, screen, stack.token());
        await expect(page.locator('[data-role=value][data-stale=false]').first()).toBeVisible();
        if (kind === 'phone') {
          // two columns: a label takes one, a plot the whole width
          const columns = await page.locator('.grid').evaluate((g) => getComputedStyle(g).gridTemplateColumns.split(' ').length);
          expect(columns).toBe(2);
        }
        await page.waitForTimeout(300); // charts' first layout
        expect(await problems(page, kind === 'phone')).toEqual([]);
      });
    }
  });
}
