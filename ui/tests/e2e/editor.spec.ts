/**
 * The screen editor end to end against the real stack (the screen store in the
 * bus's key-value bucket, served by the gateway): build a screen by drag and drop,
 * bind channels through the picker, save and see it live elsewhere; conflicts,
 * revert, draft recovery, delete, and no edit controls without the grant.
 */
import { expect, openScreen, test } from './fixtures';
import { handToken } from './token';
import { bind, drop, openEditor, save, savedRevision, viewer } from './editing';

test('build a screen from empty by drag and drop, bind channels, save, see it live elsewhere within 1 s', async ({ page, browser, stack }) => {
  await openEditor(page, stack, '');
  const placed: [string, number, number, string | null][] = [
    ['text', 1, 1, null],
    ['label', 1, 2, 'SINE'],
    ['led', 4, 2, 'STATE'],
    ['bar', 7, 2, 'SINE'],
    ['gauge', 1, 5, 'NOISE'],
    ['trend', 5, 5, 'WALK'],
  ];
  for (const [type, x, y, pv] of placed) {
    await drop(page, type, x, y);
    const item = page.locator(`.ed-item[data-type="${type}"]`);
    await expect(item).toHaveClass(/selected/);
    await expect(item).toHaveAttribute('data-x', String(x));
    if (pv) await bind(page, `DEMO:${pv.slice(0, 3)}`, stack.pv(pv));
  }
  await page.locator('input[data-prop="title"]').first().evaluate(() => {}); // panel is up
  // live values while editing: the label bound through the picker shows the sine
  const label = page.locator(`.ed-item[data-type="label"] [data-role=value]`);
  await expect(label).toHaveAttribute('data-stale', 'false');
  await expect(label).toHaveText(/\d/);
  await page.getByTestId('new-name').fill('e2e-built');
  const first = await save(page, 'six widgets');
  await expect(page).toHaveURL(/#\/edit\/e2e-built$/);

  // another browser (a viewer) shows it live, and follows the next save within 1 s
  const other = await viewer(browser, stack, 'e2e-built');
  await expect(other.getByRole('heading', { name: 'New screen' })).toBeVisible();
  await expect(other.locator(`[data-widget="label"][data-channel="${stack.pv('SINE')}"] [data-role=value]`).first()).toHaveAttribute('data-stale', 'false');
  await expect(other.locator('[data-widget]')).toHaveCount(6);
  await page.locator('.ed-item[data-type="text"]').click();
  await page.locator('input[data-prop="title"]').fill('Built in the browser');
  await page.locator('input[data-prop="title"]').press('Enter');
  await save(page, 'a title', first);
  const saved = Date.now();
  await expect(other.locator('[data-widget="text"]')).toContainText('Built in the browser', { timeout: 1000 });
  expect(Date.now() - saved).toBeLessThan(1000);
  await other.context().close();
});

test('the picker\'s list follows the channel directory while it is open: a channel that comes later is listed without typing again', async ({ page, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'label', 1, 1);
  const uri = `ca://E2E:PICKER:${Date.now()}`;
  const picker = page.getByRole('combobox', { name: 'add channel' });
  await picker.fill('PICKER');
  const list = page.getByRole('listbox', { name: 'channels' });
  await expect(list).toContainText('no channel has “PICKER”');
  await stack.announce(uri, 'pressure of the picker test'); // as an adapter serving it from now on
  await expect(list.getByRole('option', { name: uri, exact: true })).toBeVisible();
  await expect(list).toContainText('[mbar] pressure of the picker test');
  await expect(picker).toHaveValue('PICKER'); // nothing typed meanwhile
  await picker.press('Enter');
  await expect(page.getByRole('combobox', { name: 'channel 1' })).toHaveValue(uri); // bound
});

test('concurrent edits: the second save is refused and offers overwrite or reload', async ({ page, browser, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'label', 1, 1);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  await page.getByTestId('new-name').fill('e2e-conflict');
  const r1 = await save(page, 'first');

  const bob = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  await openEditor(bob, stack, 'e2e-conflict', 'bob');
  // alice edits while bob does: both start from revision 1
  await page.locator('.ed-item[data-type="label"]').click();
  await page.keyboard.press('ArrowRight');
  await bob.locator('.ed-item[data-type="label"]').click();
  await bob.keyboard.press('ArrowDown');
  const r2 = await save(bob, 'bob moves it down', r1);

  await page.getByRole('button', { name: 'Save' }).click();
  const conflict = page.getByTestId('conflict');
  await expect(conflict).toContainText(`bob saved revision ${r2}`);
  await expect(page.getByTestId('editor')).toHaveAttribute('data-dirty', 'true'); // nothing lost
  await conflict.getByRole('button', { name: 'Overwrite with mine' }).click();
  const r3 = await savedRevision(page, r2);
  await expect(page.locator('.ed-item[data-type="label"]')).toHaveAttribute('data-x', '2');

  // bob (unchanged since his save) follows alice's revision; then a conflict resolved by reload
  await expect(bob.getByTestId('editor')).toHaveAttribute('data-revision', String(r3));
  await page.locator('.ed-item[data-type="label"]').click();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await bob.locator('.ed-item[data-type="label"]').click();
  await bob.keyboard.press('ArrowRight');
  const r4 = await save(bob, 'bob again', r3);
  // alice, with edits of her own, is told at once, and asked when she saves
  await expect(page.getByTestId('external')).toContainText(`revision ${r4} was saved by bob`);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('conflict').getByRole('button', { name: 'Reload theirs (drop mine)' }).click();
  await expect(page.getByTestId('editor')).toHaveAttribute('data-revision', String(r4));
  await expect(page.getByTestId('save-state')).toHaveText(`saved · revision ${r4}`);
  await expect(page.locator('.ed-item[data-type="label"]')).toHaveAttribute('data-x', '3');
  await bob.context().close();
});

test('history lists who saved what; a preview shows an old revision; revert makes a new one', async ({ page, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'label', 1, 1);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  await page.getByTestId('new-name').fill('e2e-history');
  const h1 = await save(page, 'one label');
  await drop(page, 'led', 4, 1);
  await bind(page, 'DEMO:STA', stack.pv('STATE'));
  const h2 = await save(page, 'an LED too', h1);

  await page.getByRole('button', { name: 'History' }).click();
  const revs = page.locator('.revisions li');
  await expect(revs).toHaveCount(2);
  await expect(revs.first()).toContainText(`#${h2}`);
  await expect(revs.first()).toContainText('alice');
  await expect(revs.first()).toContainText('an LED too');
  await revs.nth(1).getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('dialog', { name: `revision ${h1}` });
  await expect(preview.locator('[data-widget]')).toHaveCount(1);
  await expect(preview.locator(`[data-widget="label"] [data-role=value]`)).toHaveAttribute('data-stale', 'false');
  await preview.getByRole('button', { name: 'Revert to this…' }).click();
  await preview.getByRole('button', { name: 'Yes, revert' }).click();
  await savedRevision(page, h2);
  await expect(page.locator('.ed-item')).toHaveCount(1);
  await expect(revs.first()).toContainText(`revert to ${h1}`);

  // delete asks first and keeps the history
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.getByRole('button', { name: 'Delete screen' }).click();
  await expect(page).toHaveURL(/#\/$/);
  const history = await page.request.get(`${stack.baseUrl}/api/screens/e2e-history/history`, { headers: { Authorization: `Bearer ${stack.token('alice', ['*'], ['*'])}` } });
  const kept = (await history.json()).revisions as { op: string; revision: number }[];
  expect(kept.map((r) => r.op)).toEqual(['delete', 'put', 'put', 'put']);
  // the kept history brings it back: the last revision, as a new one
  await handToken(page, stack.token('alice', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/edit/e2e-history`);
  const deleted = page.getByTestId('deleted-screen');
  await expect(deleted).toContainText(`Its last revision, #${kept[1].revision}`);
  await expect(deleted).toContainText(`revert to ${h1}`);
  await deleted.getByRole('button', { name: `Restore revision ${kept[1].revision}` }).click();
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.locator('.ed-item')).toHaveCount(1);
  await expect(page.getByTestId('save-state')).toHaveText(/^saved · revision \d+$/);
  // (a history read on a loaded machine can come back short: asked again until whole)
  await expect
    .poll(async () => {
      const again = await page.request.get(`${stack.baseUrl}/api/screens/e2e-history/history`, { headers: { Authorization: `Bearer ${stack.token('alice', ['*'], ['*'])}` } });
      return again.ok() ? ((await again.json()).revisions as { op: string }[]).map((r) => r.op) : await again.text();
    })
    .toEqual(['put', 'delete', 'put', 'put', 'put']);
});

test('unsaved changes survive a reload and are named', async ({ page, stack }) => {
  await openEditor(page, stack, 'epics-demo');
  const before = await page.locator('.ed-item').count();
  await drop(page, 'text', 1, 1);
  await page.locator('input[data-prop="title"]').fill('not saved yet');
  await page.locator('input[data-prop="title"]').press('Enter');
  await expect(page.getByTestId('save-state')).toHaveText('unsaved changes');
  await page.evaluate(() => (globalThis as { __synopticEditor?: { flushDraft(): void } }).__synopticEditor!.flushDraft());
  page.once('dialog', (d) => d.accept()); // the browser's own "leave page?" prompt
  await page.reload();
  await expect(page.getByTestId('draft-banner')).toContainText('You have unsaved changes (added 1 text)');
  await expect(page.locator('.ed-item')).toHaveCount(before + 1);
  await expect(page.locator('.ed-item[data-type="text"]').last()).toContainText('not saved yet');
  // the screen list says where unsaved changes are kept
  await handToken(page, stack.token('alice', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/`);
  await page.getByTestId('draft-link').click(); // the only screen with a draft
  await expect(page).toHaveURL(/#\/edit\/epics-demo$/);
  await expect(page.getByTestId('draft-banner')).toContainText('You have unsaved changes (added 1 text)');
  await page.getByTestId('draft-banner').getByRole('button', { name: 'Discard them' }).click();
  await expect(page.locator('.ed-item')).toHaveCount(before);
  await expect(page.getByTestId('save-state')).not.toHaveText('unsaved changes');
});

test('a viewer without the grant sees no edit controls and a forged save is refused', async ({ page, stack }) => {
  await handToken(page, stack.token('viewer', [], []));
  await page.goto(`${stack.baseUrl}/#/screen/epics-demo`);
  await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
  await expect(page.getByRole('link', { name: 'Edit' })).toHaveCount(0);
  await handToken(page, stack.token('viewer', [], []));
  await page.goto(`${stack.baseUrl}/#/edit/epics-demo`);
  await expect(page.getByRole('alert')).toContainText('You may not edit');
  await expect(page.getByRole('toolbar', { name: 'editor' })).toHaveCount(0);
  await page.goto(`${stack.baseUrl}/#/`);
  await expect(page.locator('ul.screens').getByRole('link', { name: 'EPICS simulated IOC' })).toBeVisible(); // in the list (not the recently opened)
  await expect(page.getByRole('link', { name: '+ New screen' })).toHaveCount(0);
  const forged = await page.request.put(`${stack.baseUrl}/api/screens/epics-demo`, {
    data: { screen: { title: 'forged', widgets: [] }, base_revision: 1, summary: 'forged' },
    headers: { Authorization: `Bearer ${stack.token('viewer', [], [])}` },
  });
  expect(forged.status()).toBe(403);
  // the granted user gets the edit link
  await handToken(page, stack.token('alice', ['*'], ['epics-*']));
  await page.goto(`${stack.baseUrl}/#/screen/epics-demo`);
  await expect(page.getByRole('link', { name: 'Edit' })).toBeVisible();
});

test('canvas gestures: drag to move, the corner to resize, rubber band, align, copy/paste, undo/redo', async ({ page, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'led', 1, 1);
  await drop(page, 'led', 4, 3);
  await drop(page, 'led', 8, 5);
  const items = page.locator('.ed-item');
  await expect(items).toHaveCount(3);
  const canvas = page.getByTestId('canvas');
  const cb = (await canvas.boundingBox())!;
  const pitch = (cb.width + 4) / 12;

  // drag the second LED two cells right and one down
  const second = items.nth(1);
  const b = (await second.boundingBox())!;
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 10; k++) await page.mouse.move(b.x + b.width / 2 + (k * 2 * pitch) / 10, b.y + b.height / 2 + (k * 34) / 10);
  await page.mouse.up();
  await expect(second).toHaveAttribute('data-x', '6');
  await expect(second).toHaveAttribute('data-y', '4');

  // resize it by its corner handle: two cells wider
  const handle = second.locator('.ed-handle');
  const h = (await handle.boundingBox())!;
  await page.mouse.move(h.x + 4, h.y + 4);
  await page.mouse.down();
  await page.mouse.move(h.x + 4 + pitch, h.y + 4, { steps: 4 });
  await page.mouse.move(h.x + 4 + 2 * pitch, h.y + 4, { steps: 4 });
  await page.mouse.up();
  await expect(page.locator('input[data-prop="w"]')).toHaveValue('4');
  // now over the third LED (row 5, columns 8-9): said in a banner above the canvas, which moves it down
  await expect(page.getByTestId('overlap')).toContainText('2 widgets overlap');

  // a rubber band over all three from empty space, then align their tops
  const band = (await canvas.boundingBox())!; // where the canvas is now
  await page.mouse.move(band.x + 11.5 * pitch, band.y + 2);
  await page.mouse.down();
  await page.mouse.move(band.x + 2, band.y + 8 * 34, { steps: 8 });
  await page.mouse.up();
  await expect(page.locator('.ed-item.selected')).toHaveCount(3);
  await page.getByRole('button', { name: '⤒ top' }).click();
  for (const i of [0, 1, 2]) await expect(items.nth(i)).toHaveAttribute('data-y', '1');

  // copy, paste (one cell down and right), delete the pasted ones; undo and redo by keys
  await canvas.focus();
  await page.keyboard.press('Control+c');
  await page.keyboard.press('Control+v');
  await expect(items).toHaveCount(6);
  await expect(page.locator('.ed-item.selected')).toHaveCount(3);
  await expect(page.locator('.ed-item.selected').first()).toHaveAttribute('data-y', '2');
  await page.keyboard.press('Delete');
  await expect(items).toHaveCount(3);
  await page.keyboard.press('Control+z');
  await expect(items).toHaveCount(6);
  await page.keyboard.press('Control+Shift+z');
  await expect(items).toHaveCount(3);
  for (let k = 0; k < 6; k++) await page.keyboard.press('Control+z'); // delete, paste, align, resize, move, 3rd drop
  await expect(items).toHaveCount(2);
  await expect(items.nth(1)).toHaveAttribute('data-x', '4');
  await expect(items.nth(1)).toHaveAttribute('data-y', '3');
});

test('a screen the schema refuses is not stored; the refusal names the widget, which is outlined and selected', async ({ page, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'text', 1, 1);
  await drop(page, 'gauge', 1, 2); // a gauge needs its channel: left unbound
  await page.locator('.ed-item[data-type="text"]').click();
  await page.getByTestId('new-name').fill('e2e-invalid');
  await page.getByRole('button', { name: 'Save' }).click();
  const invalid = page.getByTestId('invalid');
  await expect(invalid).toContainText('/widgets/1');
  await expect(page.locator('.ed-item[data-type="gauge"]')).toHaveClass(/invalid/);
  await expect(page.locator('.ed-item[data-type="gauge"]')).toHaveClass(/selected/);
  await expect(page.getByTestId('save-state')).toHaveText('unsaved changes');
  const res = await page.request.get(`${stack.baseUrl}/api/screens/e2e-invalid`);
  expect(res.status()).toBe(404); // nothing written
  // bound, it saves
  await bind(page, 'DEMO:NOI', stack.pv('NOISE'));
  await save(page, 'now valid');
  await expect(invalid).toHaveCount(0);
});

test('a section carries the widgets inside it when dragged; viewers see it framed with its title', async ({ page, browser, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'section', 1, 1);
  await page.locator('input[data-prop="title"]').fill('Vacuum');
  await page.locator('input[data-prop="title"]').press('Enter');
  await drop(page, 'led', 2, 2); // inside the section (6 × 4 cells from 1,1)
  await bind(page, 'DEMO:STA', stack.pv('STATE'));
  await drop(page, 'led', 9, 2); // outside it
  await bind(page, 'DEMO:MOD', stack.pv('MODE'));
  const section = page.locator('.ed-item[data-type="section"]');
  const inside = page.locator('.ed-item[data-type="led"]').first();
  const outside = page.locator('.ed-item[data-type="led"]').nth(1);
  const pitch = ((await page.getByTestId('canvas').boundingBox())!.width + 4) / 12;
  const b = (await section.boundingBox())!;
  await page.mouse.move(b.x + b.width - 10, b.y + b.height - 20); // on the section, beside its LED
  await page.mouse.down();
  await page.mouse.move(b.x + b.width - 10, b.y + b.height - 20 + 2 * 34, { steps: 6 });
  await page.mouse.move(b.x + b.width - 10 + pitch, b.y + b.height - 20 + 2 * 34, { steps: 6 });
  await page.mouse.up();
  await expect(section).toHaveAttribute('data-y', '3');
  await expect(section).toHaveAttribute('data-x', '2');
  await expect(inside).toHaveAttribute('data-y', '4');
  await expect(inside).toHaveAttribute('data-x', '3');
  await expect(outside).toHaveAttribute('data-y', '2'); // not in it: stays
  await page.getByTestId('new-name').fill('e2e-section');
  await save(page, 'a section');
  const view = await (await browser.newContext()).newPage();
  await view.goto(`${stack.baseUrl}/#/screen/e2e-section`);
  await expect(view.locator('[data-widget="section"]')).toContainText('Vacuum');
  await expect(view.locator(`[data-widget="led"][data-channel="${stack.pv('STATE')}"] [data-role=value]`).first()).toHaveAttribute('data-stale', 'false');
  await view.context().close();
});

test('a canvas screen is edited in its pixels: move and resize snapping to 10 px, save, seen in another context', async ({ page, browser, stack }) => {
  const whoami = page.waitForResponse((r) => r.url().includes('/api/whoami'));
  await handToken(page, stack.token('alice', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/screen/epics-canvas`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await whoami;
  await page.getByRole('link', { name: 'Edit' }).click();
  await expect(page.getByTestId('editor')).toBeVisible();
  const canvas = page.getByTestId('canvas');
  const scale = Number(await canvas.getAttribute('data-scale'));
  expect(scale).toBeGreaterThan(0.3);
  expect(scale).toBeLessThan(2);
  // live while editing, with the screen's macros expanded (ca://$(P)SINE is DEMO:SINE)
  const sine = page.locator('.ed-item[data-type="label"] [data-role=value]').first();
  await expect(sine).toHaveAttribute('data-stale', 'false');
  await expect(sine).toHaveText(/\d/);
  const bar = page.locator('.ed-item[data-type="bar"]');
  await expect(bar).toHaveAttribute('data-x', '280');
  await expect(bar).toHaveAttribute('data-y', '70');
  // drag by (53, 26) canvas px: the corner snaps to (330, 100)
  const b = (await bar.boundingBox())!;
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 4; k++) await page.mouse.move(b.x + b.width / 2 + (53 * scale * k) / 4, b.y + b.height / 2 + (26 * scale * k) / 4);
  await page.mouse.up();
  await expect(bar).toHaveAttribute('data-x', '330');
  await expect(bar).toHaveAttribute('data-y', '100');
  await expect(bar).toHaveClass(/selected/);
  // the corner by (41, 7) canvas px: 180 × 24 becomes 220 × 30 (right and bottom edges on the grid)
  const h = (await bar.locator('[data-handle]').boundingBox())!;
  await page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 4; k++) await page.mouse.move(h.x + h.width / 2 + (41 * scale * k) / 4, h.y + h.height / 2 + (7 * scale * k) / 4);
  await page.mouse.up();
  await expect(page.locator('input[data-prop="w"]')).toHaveValue('220');
  await expect(page.locator('input[data-prop="h"]')).toHaveValue('30');
  // the keys move by the snap step; with snapping off by one pixel
  await page.keyboard.press('ArrowRight');
  await expect(bar).toHaveAttribute('data-x', '340');
  await page.getByTestId('snap').uncheck();
  await bar.click();
  await page.keyboard.press('ArrowLeft');
  await expect(bar).toHaveAttribute('data-x', '339');
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await expect(bar).toHaveAttribute('data-x', '330');
  const rev = await save(page, 'the bar moved and grew');

  const other = await viewer(browser, stack, 'epics-canvas');
  const root = other.locator('.grid.canvas').first();
  await expect(root).toHaveAttribute('data-ready', 'true');
  const k = Number(await root.getAttribute('data-scale'));
  const origin = (await root.boundingBox())!;
  const box = (await other.locator('.abs.t-bar').first().boundingBox())!;
  expect(box.x - origin.x).toBeCloseTo(330 * k, 0);
  expect(box.y - origin.y).toBeCloseTo(100 * k, 0);
  expect(box.width).toBeCloseTo(220 * k, 0);
  expect(box.height).toBeCloseTo(30 * k, 0);
  expect(rev).toBeGreaterThan(0);
  await other.context().close();
});

test('style, visibility and a rule from the property panel reach the viewer', async ({ page, browser, stack }) => {
  await openEditor(page, stack, 'epics-canvas');
  // nothing selected: the canvas's own settings, from the schema
  const background = page.locator('input[data-prop="canvas-background"]');
  await expect(background).toHaveValue('#dcdcdc');
  await background.fill('nocolour');
  await background.press('Enter');
  await expect(page.getByRole('alert').filter({ hasText: "'nocolour' is not a colour" })).toBeVisible();
  await background.fill('Grid');
  await background.press('Enter');
  await expect(page.getByTestId('canvas')).toHaveCSS('background-color', 'rgb(128, 128, 128)');
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(page.getByTestId('canvas')).toHaveCSS('background-color', 'rgb(220, 220, 220)');
  const bar = page.locator('.ed-item[data-type="bar"]');
  await bar.click();
  const style = page.getByTestId('style');
  // a colour that is none is named and not applied; a named one is, with the name kept
  await style.locator('input[data-style="bg"]').fill('reddish');
  await style.locator('input[data-style="bg"]').press('Enter');
  await expect(style.getByRole('alert')).toContainText("'reddish' is not");
  await style.locator('input[data-style="bg"]').fill('MAJOR');
  await style.locator('input[data-style="bg"]').press('Enter');
  await expect(style.getByRole('alert')).toHaveCount(0);
  await expect(bar).toHaveCSS('background-color', 'rgb(255, 0, 0)');
  await style.locator('select[data-style="font"]').selectOption('Header 2');
  await style.locator('input[data-style="border.width"]').fill('2');
  await style.locator('input[data-style="border.width"]').press('Enter');
  // hidden unless a rule shows it, shown dimmed in the editor
  await page.locator('input[data-prop="visible"]').uncheck();
  await expect(bar).toHaveClass(/ed-hidden/);
  await page.locator('input[data-prop="visible"]').check();
  await expect(bar).not.toHaveClass(/ed-hidden/);
  // a rule: while loc://e2e_gain > 2 the background is OK (green)
  const rules = page.getByTestId('rules');
  await rules.getByRole('button', { name: '+ rule' }).click();
  // a channel the schema refuses: the save is refused naming the rule, the bar stays outlined and selected
  await rules.locator('input[data-rule-field="channel"]').fill('no scheme');
  await rules.locator('input[data-rule-field="channel"]').press('Enter');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('invalid')).toContainText('/rules/0/channel');
  await expect(bar).toHaveClass(/invalid/);
  await expect(bar).toHaveClass(/selected/);
  await rules.locator('input[data-rule-field="channel"]').fill('loc://e2e_gain(3)');
  await rules.locator('input[data-rule-field="channel"]').press('Enter');
  await rules.locator('select[data-rule-field="op"]').selectOption('>');
  await rules.locator('input[data-rule-field="value"]').fill('2');
  await rules.locator('input[data-rule-field="value"]').press('Enter');
  await rules.locator('input[data-rule-set="bg"]').fill('OK');
  await rules.locator('input[data-rule-set="bg"]').press('Enter');
  await rules.locator('select[data-rule-set="visible"]').selectOption(''); // the new rule's "show it" effect goes
  await expect(rules.locator('select[data-rule-set="visible"]')).toHaveValue('');
  await expect(rules.locator('[data-rule]')).toHaveCount(1);
  await save(page, 'bar styled, with a rule');

  const other = await viewer(browser, stack, 'epics-canvas');
  const shown = other.locator('.abs.t-bar').first();
  await expect(shown).toHaveCSS('font-size', '18px');
  await expect(shown).toHaveCSS('border-top-width', '2px');
  await expect(shown).toHaveCSS('background-color', 'rgb(0, 255, 0)'); // the rule wins over the style
  await other.context().close();
});

test('a new screen is a grid of the chosen columns or a canvas of the chosen size', async ({ page, browser, stack }) => {
  const token = stack.token('alice', ['*'], ['*']);
  await openScreen(page, stack, 'epics-demo');
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/new`);
  const form = page.getByTestId('new-screen');
  await expect(form.getByRole('radio', { name: /^grid/ })).toBeChecked();
  await expect(form.getByTestId('new-columns')).toHaveValue('12');
  // a canvas: a size the schema refuses is named and cannot be created; a preset, then a typed size
  await form.getByRole('radio', { name: /^canvas/ }).check();
  await expect(form.getByTestId('new-width')).toHaveValue('1280');
  await form.getByTestId('new-height').fill('0');
  await expect(form.getByRole('alert')).toHaveText('height is a whole number from 1 to 20000');
  await expect(form.getByRole('button', { name: 'Create' })).toBeDisabled();
  await form.getByRole('button', { name: '1024 × 768' }).click();
  await expect(form.getByTestId('new-height')).toHaveValue('768');
  await expect(form.getByRole('alert')).toHaveCount(0);
  await form.getByTestId('new-width').fill('1000');
  await form.getByTestId('new-height').fill('600');
  await form.getByTestId('new-title').fill('A canvas from scratch');
  await form.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.getByTestId('canvas')).toHaveAttribute('data-scale', /\d/);
  await expect(page.locator('input[data-prop="canvas-width"]')).toHaveValue('1000');
  await expect(page.locator('input[data-prop="canvas-height"]')).toHaveValue('600');
  await page.locator('[data-palette="label"]').click();
  const label = page.locator('.ed-item[data-type="label"]');
  await expect(label).toHaveAttribute('data-x', '10'); // canvas pixels
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  // a reload keeps the new canvas screen as a draft (no second choice)
  await page.evaluate(() => (globalThis as { __synopticEditor?: { flushDraft(): void } }).__synopticEditor!.flushDraft());
  page.once('dialog', (d) => d.accept());
  await page.reload();
  await expect(page.getByTestId('draft-banner')).toContainText('started from a new screen');
  await expect(page.locator('input[data-prop="canvas-width"]')).toHaveValue('1000');
  await page.getByTestId('new-name').fill('e2e-new-canvas');
  await save(page, 'a canvas');
  const stored = await page.request.get(`${stack.baseUrl}/api/screens/e2e-new-canvas`, { headers: { Authorization: `Bearer ${token}` } });
  expect((await stored.json()).layout).toEqual({ type: 'canvas', width: 1000, height: 600 });
  const other = await viewer(browser, stack, 'e2e-new-canvas');
  const root = other.locator('.grid.canvas').first();
  await expect(root).toHaveAttribute('data-ready', 'true');
  const k = Number(await root.getAttribute('data-scale'));
  const box = (await root.boundingBox())!;
  expect(box.width).toBeCloseTo(1000 * k, 0);
  expect(box.height).toBeCloseTo(600 * k, 0);
  await expect(other.locator(`[data-widget="label"][data-channel="${stack.pv('SINE')}"] [data-role=value]`).first()).toHaveAttribute('data-stale', 'false');
  await other.context().close();

  // a grid of 6 columns: a widget spans its columns
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/new`);
  await form.getByTestId('new-columns').fill('97');
  await expect(form.getByRole('alert')).toHaveText('columns is a whole number from 1 to 96');
  await form.getByTestId('new-columns').fill('6');
  await form.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.getByRole('complementary', { name: 'properties' }).getByRole('spinbutton', { name: 'columns' })).toHaveValue('6');
  await drop(page, 'text', 1, 1);
  await page.getByTestId('new-name').fill('e2e-new-grid');
  await save(page, 'a six-column grid');
  const grid = await page.request.get(`${stack.baseUrl}/api/screens/e2e-new-grid`, { headers: { Authorization: `Bearer ${token}` } });
  expect((await grid.json()).layout).toEqual({ type: 'grid', columns: 6, row_height: 30, gap: 4 });
});

test('several selected widgets: the panel sets what they have in common for all, one undo step each, "mixed" where they differ', async ({ page, stack }) => {
  type Spec = { title?: string; w: number; channels?: string[]; options?: Record<string, unknown>; rules?: { set: Record<string, unknown> }[] };
  const specs = () => page.evaluate(() => (globalThis as unknown as { __synopticEditor: { doc: { widgets: { spec: Spec }[] } } }).__synopticEditor.doc.widgets.map((w) => w.spec));
  await openEditor(page, stack, '');
  for (const [type, x, pv] of [['label', 1, 'SINE'], ['gauge', 4, 'NOISE'], ['bar', 7, 'WALK']] as const) {
    await drop(page, type, x, 1);
    await bind(page, `DEMO:${pv.slice(0, 3)}`, stack.pv(pv));
  }
  const props = page.getByRole('complementary', { name: 'properties' });
  await props.locator('input[data-option="prec"]').fill('3'); // the bar alone
  await props.locator('input[data-option="prec"]').press('Enter');
  await props.locator('select[data-style="align"]').selectOption('right');
  await props.locator('input[data-style="transparent"]').check();
  await page.locator('.ed-item[data-type="label"]').click();
  await page.keyboard.press('Control+a');
  await expect(props.getByRole('heading', { name: '3 widgets' })).toBeVisible();
  // labels stay per widget; the options all three types have; differing values are "mixed"
  await expect(props.locator('input[data-prop="title"]')).toHaveCount(0);
  await expect(props.getByTestId('options').locator('[data-option]')).toHaveCount(2);
  const prec = props.locator('input[data-option="prec"]');
  await expect(prec).toHaveAttribute('placeholder', 'mixed');
  await expect(prec).toHaveValue('');
  await expect(props.getByRole('combobox', { name: 'channel 1' })).toHaveAttribute('placeholder', 'mixed');
  await expect(props.locator('input[data-prop="w"]')).toHaveAttribute('placeholder', 'mixed'); // 2, 3 and 3 cells wide
  const align = props.locator('select[data-style="align"]');
  await expect(align).toHaveValue('\u0000mixed');
  await expect(align.locator('option:checked')).toHaveText('(mixed)');
  expect(await props.locator('input[data-style="transparent"]').evaluate((e) => (e as HTMLInputElement).indeterminate)).toBe(true);
  await align.selectOption('center');
  await expect(align).toHaveValue('center');

  await prec.fill('1');
  await prec.press('Enter');
  await expect(prec).toHaveValue('1');
  await expect(prec).not.toHaveAttribute('data-mixed');
  await props.locator('input[data-option="unit"]').fill('mm');
  await props.locator('input[data-option="unit"]').press('Enter');
  expect((await specs()).map((s) => [s.options?.prec, s.options?.unit, s.title, (s as { style?: { align?: string } }).style?.align])).toEqual(Array(3).fill([1, 'mm', undefined, 'center']));
  await page.getByRole('button', { name: 'Undo' }).click(); // the units, on all three
  expect((await specs()).map((s) => s.options?.unit)).toEqual([undefined, undefined, undefined]);
  await page.getByRole('button', { name: 'Undo' }).click(); // the precision, on all three
  expect((await specs()).map((s) => s.options?.prec)).toEqual([undefined, undefined, 3]);
  await expect(prec).toHaveAttribute('placeholder', 'mixed');
  await page.getByRole('button', { name: 'Redo' }).click();
  await expect(prec).toHaveValue('1');

  // a colour rule on all: added to each, its effect set on each, undone on all at once
  const rules = props.getByTestId('rules');
  await rules.getByRole('button', { name: '+ rule' }).click();
  await expect(rules.locator('[data-rule]')).toHaveCount(1);
  await rules.locator('input[data-rule-set="bg"]').fill('MAJOR');
  await rules.locator('input[data-rule-set="bg"]').press('Enter');
  await rules.locator('select[data-rule-field="op"]').selectOption('>');
  await rules.locator('input[data-rule-field="value"]').fill('0.5');
  await rules.locator('input[data-rule-field="value"]').press('Enter');
  expect((await specs()).map((s) => s.rules)).toEqual(Array(3).fill([{ op: '>', value: 0.5, set: { visible: true, bg: 'MAJOR' } }]));
  await page.getByRole('button', { name: 'Undo' }).click();
  expect((await specs()).map((s) => (s.rules?.[0] as { value?: number }).value)).toEqual([0, 0, 0]); // the value, on all three
  await page.getByRole('button', { name: 'Redo' }).click();

  // size and one channel for all
  await props.locator('input[data-prop="w"]').fill('3');
  await props.locator('input[data-prop="w"]').press('Enter');
  const channel = props.getByRole('combobox', { name: 'channel 1' });
  await channel.fill('DEMO:STA');
  await expect(page.getByRole('option', { name: stack.pv('STATE'), exact: true })).toBeVisible();
  await page.getByRole('option', { name: stack.pv('STATE'), exact: true }).hover();
  await channel.press('Enter');
  expect((await specs()).map((s) => [s.w, s.channels])).toEqual(Array(3).fill([3, [stack.pv('STATE')]]));
  await expect(channel).toHaveValue(stack.pv('STATE'));
  await page.getByRole('button', { name: 'Undo' }).click();
  expect((await specs()).map((s) => s.channels?.[0])).toEqual([stack.pv('SINE'), stack.pv('NOISE'), stack.pv('WALK')]);
  await expect(props.getByRole('combobox', { name: 'channel 1' })).toHaveAttribute('placeholder', 'mixed');

  // one widget alone again: its own label and values
  await page.locator('.ed-item[data-type="gauge"]').click();
  await expect(props.getByRole('heading', { name: 'gauge' })).toBeVisible();
  await expect(props.locator('input[data-option="prec"]')).toHaveValue('1');
  await expect(props.locator('input[data-prop="title"]')).toHaveCount(1);
  await page.getByTestId('new-name').fill('e2e-multi');
  const rev = await save(page, 'three widgets set together');
  const stored = await page.request.get(`${stack.baseUrl}/api/screens/e2e-multi`, { headers: { Authorization: `Bearer ${stack.token('alice', ['*'], ['*'])}` } });
  expect(((await stored.json()).widgets as Spec[]).map((s) => [s.w, s.options?.prec, s.rules?.[0].set.bg])).toEqual(Array(3).fill([3, 1, 'MAJOR']));
  // Ctrl+S from a field: what was typed there is committed and saved
  await props.locator('input[data-prop="title"]').fill('pressure');
  await props.locator('input[data-prop="title"]').press('Control+s');
  await savedRevision(page, rev);
  await expect(page.getByTestId('save-state')).toHaveText(/^saved · revision \d+$/);
  const again = await page.request.get(`${stack.baseUrl}/api/screens/e2e-multi`, { headers: { Authorization: `Bearer ${stack.token('alice', ['*'], ['*'])}` } });
  expect(((await again.json()).widgets as Spec[]).map((s) => s.title)).toEqual([undefined, 'pressure', undefined]);
});
