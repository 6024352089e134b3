/**
 * What a newcomer must never meet, checked on any page: an error banner, widgets
 * overlapping that nobody placed so, a widget whose colour contradicts its severity.
 */
import type { Page } from '@playwright/test';
import { expect } from './fixtures';

/** No error banner on the page (role alert). */
export async function noErrorBanner(page: Page): Promise<void> {
  await expect(page.getByRole('alert')).toHaveCount(0);
}

/** No two editor widgets of a grid overlap (sections hold widgets: not an overlap). */
export async function noOverlap(page: Page): Promise<void> {
  const boxes = await page.locator('.ed-item:not(.section)').evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { id: (el as HTMLElement).dataset.id, x: r.x, y: r.y, w: r.width, h: r.height };
    }),
  );
  const hits: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      // 1 px of slack: neighbours touch at the gap
      if (a.x + a.w - 1 > b.x && b.x + b.w - 1 > a.x && a.y + a.h - 1 > b.y && b.y + b.h - 1 > a.y) hits.push(`${a.id}/${b.id}`);
    }
  expect(hits, 'widgets overlap').toEqual([]);
  await expect(page.getByTestId('overlap')).toHaveCount(0);
}

/**
 * Every LED and bar in alarm shows its alarm's colour (the theme's --minor, --major,
 * --invalid); returns the LEDs' words seen with their severities, for the caller to
 * wait on a state.
 */
export async function severityContradictions(page: Page): Promise<{ bad: string[]; seen: string[] }> {
  return page.evaluate(() => {
    const probe = document.createElement('span');
    document.body.append(probe);
    const colourOf = (css: string) => {
      probe.style.color = css;
      return getComputedStyle(probe).color;
    };
    const alarm: Record<string, string> = { 'sev-minor': colourOf('var(--minor)'), 'sev-major': colourOf('var(--major)'), 'sev-invalid': colourOf('var(--invalid)') };
    const bad: string[] = [];
    const seen: string[] = [];
    const sevOf = (el: Element) => [...el.classList].find((c) => c in alarm);
    for (const led of document.querySelectorAll('.w-led')) {
      const sev = sevOf(led);
      seen.push(`${led.textContent?.trim()}:${sev ?? 'none'}`);
      if (!sev) continue;
      const lamp = getComputedStyle(led, '::before').backgroundColor;
      if (lamp !== alarm[sev]) bad.push(`LED '${led.textContent?.trim()}' ${sev} lit ${lamp}`);
    }
    for (const bar of document.querySelectorAll('.w-bar')) {
      const sev = sevOf(bar);
      if (!sev) continue;
      const fill = getComputedStyle(bar.querySelector('.fill')!).backgroundColor;
      if (fill !== alarm[sev]) bad.push(`bar ${sev} filled ${fill}`);
    }
    probe.remove();
    return { bad, seen };
  });
}

/** No two widgets of a viewed screen overlap (sections hold widgets: not an overlap). */
export async function noViewerOverlap(page: Page): Promise<void> {
  const hits = await page.locator('.grid > .cell').evaluateAll((els) => {
    const boxes = els
      .filter((el) => el.getAttribute('data-widget') !== 'section')
      .map((el) => ({ w: el.getAttribute('data-widget'), r: el.getBoundingClientRect() }));
    const out: string[] = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].r;
        const b = boxes[j].r;
        if (a.right - 1 > b.left && b.right - 1 > a.left && a.bottom - 1 > b.top && b.bottom - 1 > a.top) out.push(`${boxes[i].w}/${boxes[j].w}`);
      }
    return out;
  });
  expect(hits, 'widgets overlap').toEqual([]);
}
