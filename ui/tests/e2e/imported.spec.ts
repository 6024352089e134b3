/** An imported Phoebus display, live: converted by the gateway (POST /api/import), saved, opened against the simulated IOC. */
import { expect, test } from './fixtures';

/** A small display over the demo IOC's PVs: mapped widgets, a local PV, a formula and a type with no mapping. */
const BOB = `<?xml version="1.0" encoding="UTF-8"?>
<display version="2.0.0">
  <name>Imported $(P)</name>
  <macros><P>NOPE:</P></macros>
  <width>600</width>
  <height>300</height>
  <widget type="label" version="2.0.0"><name>Title</name><text>Sector $(P)</text><x>10</x><y>10</y><width>300</width><height>30</height></widget>
  <widget type="textupdate" version="2.0.0"><name>Sine</name><pv_name>$(P)SINE</pv_name><x>10</x><y>50</y><width>120</width><height>20</height></widget>
  <widget type="textupdate" version="2.0.0"><name>Counter</name><pv_name>$(P)CNT:00000</pv_name><x>10</x><y>80</y><width>120</width><height>20</height></widget>
  <widget type="led" version="2.0.0"><name>State</name><pv_name>$(P)STATE</pv_name><x>150</x><y>50</y><width>20</width><height>20</height></widget>
  <widget type="progressbar" version="2.0.0"><name>Bar</name><pv_name>$(P)SINE</pv_name><x>10</x><y>110</y><width>200</width><height>20</height></widget>
  <widget type="polyline" version="2.0.0"><name>Pipe</name><x>300</x><y>50</y><width>200</width><height>60</height></widget>
</display>`;

test('an imported .bob renders and updates live; what has no mapping is a labelled placeholder', async ({ page, stack }) => {
  const editor = { Authorization: `Bearer ${stack.token('importer', ['*'], ['*'])}` };
  const converted = await page.request.post(`${stack.baseUrl}/api/import?file=imported-demo.bob&macro=P%3DDEMO%3A`, { data: BOB, headers: { ...editor, 'Content-Type': 'application/octet-stream' } });
  expect(converted.status()).toBe(200);
  const { name, screen, report } = await converted.json();
  expect(report.widgets).toBe(6);
  const saved = await page.request.put(`${stack.baseUrl}/api/screens/${name}`, { data: { screen, base_revision: 0, summary: 'imported' }, headers: editor });
  expect(saved.status()).toBe(200);

  await page.goto(`${stack.baseUrl}/#/screen/${name}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid').first()).toHaveAttribute('data-ready', 'true');
  await expect(page.getByText('Sector DEMO:')).toBeVisible();
  const counter = page.locator(`[data-channel="${stack.pv('CNT:00000')}"]`).first();
  const value = counter.locator('[data-role=value]').or(counter.and(page.locator('[data-role=value]'))).first();
  await expect(value).toHaveAttribute('data-stale', 'false');
  const first = parseFloat((await value.textContent())!);
  await expect.poll(async () => parseFloat((await value.textContent())!)).toBeGreaterThan(first);
  await expect(page.locator(`[data-widget=led][data-channel="${stack.pv('STATE')}"]`)).toHaveCount(1);
  await expect(page.locator(`[data-widget=bar][data-channel="${stack.pv('SINE')}"]`)).toHaveCount(1);
  // never dropped: the polyline is a visible placeholder naming its original type
  const placeholder = page.locator('[data-widget=placeholder]');
  await expect(placeholder).toBeVisible();
  await expect(placeholder).toContainText('polyline');
});
