/**
 * The demo screens on a phone and a tablet (Playwright's device profiles, in
 * Chromium): grid screens reflow below 640 px; no control is clipped by its cell
 * or the page, no value is cut (nor, on a phone, a caption), and the page never
 * scrolls sideways. Chart and gauge labels are drawn on canvas: read from each
 * chart (its element's `textBoxes()`), no two overlap and none is cut by the chart's
 * edge (axes drop overlapping ones, ECharts hideOverlap; gauges get as many ticks as
 * their dial has room for, a trend's value axis as many as its plot's height has,
 * charts/ticks.ts). A canvas screen scales to the width.
 */
import { devices, type Page } from '@playwright/test';
import type { TextBox } from '../../src/lib/charts/echarts';
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

type ChartLabels = { where: string; w: number; h: number; boxes: TextBox[]; over: TextBox[] };

/**
 * The charts of the page, each once it draws text: their labels (`textBoxes()`, on
 * canvas) and the widget's own controls and texts laid over the chart (a trend's
 * range menu), both in chart pixels.
 */
async function chartLabels(page: Page): Promise<ChartLabels[] | null> {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('main .chart')) {
      const host = el as HTMLElement & { textBoxes?: () => TextBox[] };
      const boxes = host.textBoxes?.() ?? [];
      if (!boxes.length) return null; // not drawn yet
      const cell = el.closest('[data-widget]');
      const at = host.getBoundingClientRect();
      const over = [];
      for (const o of host.parentElement!.querySelectorAll(':is(select, button, input, a, span)')) {
        const r = o.getBoundingClientRect();
        if (host.contains(o) || !r.width || !r.height) continue;
        over.push({ text: `${o.tagName.toLowerCase()} "${(o.textContent ?? '').trim().slice(0, 20)}"`, x: r.left - at.left, y: r.top - at.top, w: r.width, h: r.height });
      }
      out.push({ where: `${cell?.getAttribute('data-widget')} ${cell?.getAttribute('data-channel') ?? ''}`, w: host.clientWidth, h: host.clientHeight, boxes, over });
    }
    return out;
  });
}

/** Whether two boxes overlap by more than 1 px both ways. */
function overlap(a: TextBox, b: TextBox): boolean {
  const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return dx > 1 && dy > 1;
}

/** Labels that overlap another of their chart or a control laid over it, or are cut by its edge (1 px tolerance). */
function labelProblems(charts: ChartLabels[]): string[] {
  const out: string[] = [];
  for (const { where, w, h, boxes, over } of charts) {
    for (const [i, a] of boxes.entries()) {
      if (a.x < -1 || a.y < -1 || a.x + a.w > w + 1 || a.y + a.h > h + 1) out.push(`${where}: "${a.text}" cut by the chart's edge`);
      for (const b of boxes.slice(i + 1)) if (overlap(a, b)) out.push(`${where}: "${a.text}" overlaps "${b.text}"`);
      for (const o of over) if (overlap(a, o)) out.push(`${where}: "${a.text}" under ${o.text}`);
    }
  }
  return out;
}

/**
 * Label problems of the page's charts over several updates (time axes move, ranges
 * follow the values): every chart drawn first, then one look after each of
 * `looks` changes of the first live value on the page.
 */
async function labelProblemsWhileLive(page: Page, looks = 4): Promise<{ charts: number; problems: string[] }> {
  let charts: Awaited<ReturnType<typeof chartLabels>> = null;
  await expect.poll(async () => (charts = await chartLabels(page)) !== null, { timeout: 20_000 }).toBe(true);
  const found = new Set(labelProblems(charts!));
  const value = page.locator('[data-role=value][data-stale=false]').first();
  for (let i = 0; i < looks; i++) {
    const before = await value.textContent();
    await expect(value).not.toHaveText(before ?? '', { timeout: 10_000 });
    for (const p of labelProblems((await chartLabels(page)) ?? [])) found.add(p);
  }
  return { charts: charts!.length, problems: [...found] };
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
        const labels = await labelProblemsWhileLive(page);
        if (screen !== 'counters') expect(labels.charts).toBeGreaterThan(0);
        expect(labels.problems).toEqual([]);
        expect(await problems(page, kind === 'phone')).toEqual([]);
      });
    }

    test('epics-canvas: scaled to the width, no sideways scroll, no overlapping label', async ({ page, stack }) => {
      await page.goto(`${stack.baseUrl}/#/screen/epics-canvas`);
      await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
      const root = page.locator('.grid.canvas').first();
      await expect(root).toHaveAttribute('data-ready', 'true');
      const area = await page.locator('.canvas-area').first().evaluate((e) => e.clientWidth);
      expect(Number(await root.getAttribute('data-scale'))).toBeCloseTo(area / 960, 3); // fit-width
      const box = (await root.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(device.viewport.width + 1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(device.viewport.width + 1);
      expect((await labelProblemsWhileLive(page)).problems).toEqual([]);
    });
  });
}
