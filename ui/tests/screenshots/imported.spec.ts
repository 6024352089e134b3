/** Screenshots for docs/user-guide.md (run by `make ui-screenshots`): an imported Phoebus .bob and an
 * imported Taranta .wj, live on the canvas against the simulated IOC and Tango device. */
import { join } from 'node:path';
import { expect, test } from '../e2e/fixtures';
import { BOB, WJ, importAndSave, openImported } from '../e2e/importing';
import { ROOT } from '../e2e/stack';

test('screenshots of imported displays', async ({ page, stack }) => {
  await page.setViewportSize({ width: 1000, height: 620 });
  const bob = await importAndSave(page, stack, 'imported-demo.bob', BOB, '&macro=P%3DDEMO%3A');
  await openImported(page, stack, bob.name);
  await expect(page.locator(`[data-role=value][data-stale=false][data-channel="${stack.pv('SINE')}"]`).first()).toBeVisible();
  await page.screenshot({ path: join(ROOT, 'docs/screenshots', 'guide-import-bob.png') });
  const host = encodeURIComponent(`127.0.0.1:${stack.tangoPort}`);
  const wj = await importAndSave(page, stack, 'imported-tango.wj', WJ, `&tango_host=${host}`);
  await openImported(page, stack, wj.name);
  await expect(page.locator(`[data-widget=label][data-channel="${stack.attr('double')}"] [data-role=value][data-stale=false]`).first()).toBeVisible();
  await expect(page.locator(`[data-widget=spectrum] canvas`).first()).toBeVisible();
  await page.screenshot({ path: join(ROOT, 'docs/screenshots', 'guide-import-wj.png') });
});
