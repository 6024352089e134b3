/** The screen list's import: choose a .bob → the gateway converts it → the coverage report shows → saved under a name → opened live. */
import { expect, test } from './fixtures';
import { handToken } from './token';
import { BOB } from './importing';

test('a .bob uploaded on the screen list shows its coverage report, is saved under a chosen name and opens live', async ({ page, stack }) => {
  const token = stack.token('uploader', ['*'], ['*']);
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/`);
  const file = page.getByTestId('import-file');
  // a file that is not XML: the gateway's reason with the file and line, nothing to save
  await file.setInputFiles({ name: 'broken.bob', mimeType: 'application/octet-stream', buffer: Buffer.from('<display>\n<x>') });
  await expect(page.getByRole('alert')).toContainText('broken.bob');
  await expect(page.getByRole('alert')).toContainText('malformed XML');
  await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0);

  await file.setInputFiles({ name: 'upload-demo.bob', mimeType: 'application/octet-stream', buffer: Buffer.from(BOB.replaceAll('NOPE:', 'DEMO:')) });
  const report = page.getByTestId('import-report');
  await expect(report).toContainText('9 of 10 widgets mapped');
  await expect(report).toContainText('placeholder 1 web_browser');
  await expect(report).toContainText('mapped 1 action_button → link');
  const name = page.getByTestId('import-name');
  await expect(name).toHaveValue('upload-demo');
  await name.fill('uploaded demo'); // not a screen name: no save
  await expect(page.getByRole('button', { name: 'Save' })).toBeDisabled();
  await name.fill('uploaded-demo');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').getByRole('link', { name: 'uploaded-demo' }).click();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
  await expect(page.getByText('Sector DEMO:')).toBeVisible();
  const counter = page.locator(`[data-channel="${stack.pv('CNT:00000')}"]`).first();
  await expect(counter.locator('[data-role=value]').or(counter.and(page.locator('[data-role=value]'))).first()).toHaveAttribute('data-stale', 'false');
  // saved once: the same name again is a conflict, reported
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/`);
  await page.getByTestId('import-file').setInputFiles({ name: 'uploaded-demo.bob', mimeType: 'application/octet-stream', buffer: Buffer.from(BOB) });
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toContainText('exists already');
});

test('the images chosen with a display fill its pictures, which open as images', async ({ page, stack }) => {
  const token = stack.token('uploader', ['*'], ['*']);
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/`);
  const bob = `<?xml version="1.0" encoding="UTF-8"?><display version="2.0.0"><name>Pictures</name><width>300</width><height>200</height>
    <widget type="picture" version="2.0.0"><name>Logo</name><file>pic/logo.png</file><x>10</x><y>10</y><width>100</width><height>80</height></widget>
    <widget type="picture" version="2.0.0"><name>Missing</name><file>pic/missing.png</file><x>150</x><y>10</y><width>100</width><height>80</height></widget></display>`;
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
  await page.getByTestId('import-file').setInputFiles([
    { name: 'pictures.bob', mimeType: 'application/octet-stream', buffer: Buffer.from(bob) },
    { name: 'logo.png', mimeType: 'image/png', buffer: png },
  ]);
  const report = page.getByTestId('import-report');
  await expect(report).toContainText('2 of 2 widgets mapped');
  await expect(report).toContainText('picture pic/logo.png: image attached');
  await page.getByTestId('import-name').fill('uploaded-pictures');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').getByRole('link', { name: 'uploaded-pictures' }).click();
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
  const logo = page.locator('[data-widget=shape] img[data-file="pic/logo.png"]');
  await expect(logo).toHaveAttribute('src', /^data:image\/png;base64,/);
  await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1); // decoded, CSP allows data: images
  // the picture not given stays a frame naming its file
  await expect(page.locator('[data-widget=shape] .w-picture[data-file="pic/missing.png"]')).toContainText('missing.png');
});
