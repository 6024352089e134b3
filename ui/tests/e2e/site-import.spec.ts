/** A whole display set imported from the browser (a folder, zipped in the page, POST /api/sites/import), then
 * navigated like a control room: a chain of three links, each passing macros, live values from the IOC on every
 * screen, and a back path. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { handToken } from './token';

function display(title: string, body: string, macros = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?><display version="2.0.0"><name>${title}</name><macros>${macros}</macros><width>500</width><height>200</height>${body}</display>`;
}
function value(pv: string, y: number): string {
  return `<widget type="textupdate" version="2.0.0"><name>V</name><pv_name>${pv}</pv_name><x>10</x><y>${y}</y><width>150</width><height>20</height></widget>`;
}
function link(text: string, file: string, macros: string): string {
  return `<widget type="action_button" version="3.0.0"><name>L</name><text>${text}</text><actions><action type="open_display"><file>${file}</file><macros>${macros}</macros><target>replace</target></action></actions><x>200</x><y>10</y><width>150</width><height>30</height></widget>`;
}

/** A set of four displays in three folders: ring → sector → device → detail, each link passing a macro. */
function writeSet(root: string): void {
  mkdirSync(join(root, 'sect'), { recursive: true });
  mkdirSync(join(root, 'dev'), { recursive: true });
  writeFileSync(join(root, 'main.bob'), display('Ring $(P)', value('$(P)SINE', 10) + link('Sector 1', 'sect/sector.bob', '<N>00001</N>'), '<P>DEMO:</P>'));
  writeFileSync(join(root, 'sect', 'sector.bob'), display('Sector $(N)', value('$(P)CNT:$(N)', 10) + link('Device', '../dev/device.opi', '<K>00002</K>')));
  writeFileSync(join(root, 'dev', 'device.bob'), display('Device $(K) of $(N)', value('$(P)CNT:$(K)', 10) + value('$(P)CNT:$(N)', 40) + link('Detail', 'detail.bob', '<W>SINE</W>')));
  writeFileSync(join(root, 'dev', 'detail.bob'), display('Detail $(W)', value('$(P)$(W)', 10) + value('$(P)CNT:$(K)', 40)));
  writeFileSync(join(root, 'README.txt'), 'not a display');
}

/** The value of the widget showing `uri` on this screen updates from the IOC. */
async function live(page: Page, uri: string): Promise<void> {
  const w = page.locator(`[data-channel="${uri}"]`).first();
  const v = w.locator('[data-role=value]').or(w.and(page.locator('[data-role=value]'))).first();
  await expect(v).toHaveAttribute('data-stale', 'false');
  const first = await v.textContent();
  await expect.poll(() => v.textContent()).not.toBe(first);
}

async function ready(page: Page): Promise<void> {
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
}

test('a folder uploaded as a set shows its site report, imports as linked screens and navigates a chain of three links carrying macros, live', async ({ page, stack }) => {
  const dir = mkdtempSync(join(tmpdir(), 'synoptic-site-'));
  const root = join(dir, 'ring');
  writeSet(root);
  try {
    const token = stack.token('site-importer', ['*'], ['*']);
    await handToken(page, token);
    await page.goto(`${stack.baseUrl}/#/`);
    await page.getByTestId('import-site-link').click();
    await page.getByTestId('site-folder').setInputFiles(root);
    // checked first: the report, nothing written
    const report = page.getByTestId('site-report');
    await expect(report).toContainText('Set ring (checked, nothing written yet)');
    await expect(page.getByTestId('site-totals')).toHaveText('4 screens, 0 files refused; home ring--main');
    await expect(page.getByTestId('site-links')).toContainText('3 resolved inside the set');
    await expect(page.getByTestId('site-widgets')).toContainText('9 of 9 mapped');
    await expect(report.locator('tr[data-action=created]')).toHaveCount(4);
    await page.getByTestId('site-import').click();
    await expect(page.getByTestId('site-done')).toContainText('4 created');

    // the home screen, then three links, each screen live with the macros its chain passed
    await page.getByTestId('site-home').click();
    await ready(page);
    await live(page, stack.pv('SINE'));
    await page.getByRole('link', { name: 'Sector 1' }).click();
    await expect(page).toHaveURL(/#\/screen\/ring--sect--sector\?/);
    await ready(page);
    await live(page, stack.pv('CNT:00001'));
    await page.getByRole('link', { name: 'Device' }).click();
    await expect(page).toHaveURL(/#\/screen\/ring--dev--device\?/);
    await ready(page);
    await expect(page.getByRole('heading', { name: 'Device 00002 of 00001' })).toBeVisible();
    // the back path names the screens on the way, each with the macros it had
    await expect(page.getByTestId('trail')).toContainText('Ring DEMO:');
    await expect(page.getByTestId('trail')).toContainText('Sector 00001');
    await live(page, stack.pv('CNT:00002'));
    await live(page, stack.pv('CNT:00001'));
    await page.getByRole('link', { name: 'Detail' }).click();
    await expect(page).toHaveURL(/#\/screen\/ring--dev--detail\?/);
    await ready(page);
    await live(page, stack.pv('SINE'));
    await live(page, stack.pv('CNT:00002'));
    // the way back is the way in
    await page.goBack();
    await expect(page).toHaveURL(/#\/screen\/ring--dev--device\?/);
    await ready(page);
    await live(page, stack.pv('CNT:00002'));

    // the screen list: the set grouped with its home, found by a word of a file, recently opened first
    await handToken(page, token);
    await page.goto(`${stack.baseUrl}/#/`);
    await expect(page.getByTestId('recent')).toContainText('Detail SINE');
    const ring = page.locator('details.set[data-set=ring]');
    await expect(ring.locator('summary')).toContainText('4 screens');
    await expect(ring.getByTestId('set-home')).toHaveText('home: Ring DEMO:');
    await page.getByTestId('screen-search').fill('detail.bob');
    await expect(ring).toHaveAttribute('open', '');
    await expect(ring.locator('ul.screens li')).toHaveCount(1);
    await expect(ring.locator('h3.folder')).toHaveText('dev/');
    await expect(page.locator('details.set')).toHaveCount(1);
    // found by a channel it shows (the gateway's answer), on a phone too
    const size = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 800 });
    await page.getByTestId('screen-search').fill('cnt:$(k)');
    await expect(ring.locator('ul.screens li')).toHaveCount(2);
    const via = ring.getByTestId('via-channel');
    await expect(via).toHaveCount(2);
    await expect(via.first()).toContainText('CNT:$(K)');
    const box = await via.first().boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(390);
    if (size) await page.setViewportSize(size);

    // the same folder again: nothing changed, nothing written
    await handToken(page, token);
    await page.goto(`${stack.baseUrl}/#/import-site`);
    await page.getByTestId('site-folder').setInputFiles(root);
    await expect(page.getByTestId('site-report').locator('tr[data-action=unchanged]')).toHaveCount(4);
    await expect(page.getByTestId('site-import')).toHaveText('Import 0 screens');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a zip that leaves its folder is refused whole, with the reason', async ({ page, stack }) => {
  const token = stack.token('site-importer', ['*'], ['*']);
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/import-site`);
  // a stored zip of one member named ../evil.bob (built by hand: tools refuse to write one)
  const name = Buffer.from('../evil.bob');
  const data = Buffer.from('<display/>');
  const crc = 0x8a1c9b52; // not checked before the name is refused
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(name.length, 28);
  const cdOffset = local.length + name.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  const zip = Buffer.concat([local, name, data, central, name, end]);
  await page.getByTestId('site-zip').setInputFiles({ name: 'evil.zip', mimeType: 'application/zip', buffer: zip });
  await expect(page.getByRole('alert')).toContainText('leaves the set');
  await expect(page.getByTestId('site-import')).toHaveCount(0);
});
