/** Displays of other tools for the import tests and screenshots: a Phoebus `.bob` over the demo IOC
 * and a Taranta `.wj` over the simulated Tango device, converted by POST /api/import and saved with PUT. */
import type { Page } from '@playwright/test';
import type { Stack } from './stack';
import { expect } from './fixtures';

/** A small display over the demo IOC's PVs: mapped widgets with Phoebus colours and fonts, a local PV,
 * a formula over it, a rule, an open-display button and a type with no mapping. */
export const BOB = `<?xml version="1.0" encoding="UTF-8"?>
<display version="2.0.0">
  <name>Imported $(P)</name>
  <macros><P>NOPE:</P></macros>
  <width>600</width>
  <height>300</height>
  <widget type="label" version="2.0.0"><name>Title</name><text>Sector $(P)</text><x>10</x><y>10</y><width>300</width><height>30</height>
    <font><font name="Header 2" family="Liberation Sans" style="BOLD" size="18.0"/></font></widget>
  <widget type="textupdate" version="2.0.0"><name>Sine</name><pv_name>$(P)SINE</pv_name><x>10</x><y>50</y><width>120</width><height>20</height>
    <background_color><color name="Read_Background" red="240" green="240" blue="240"/></background_color></widget>
  <widget type="textupdate" version="2.0.0"><name>Counter</name><pv_name>$(P)CNT:00000</pv_name><x>10</x><y>80</y><width>120</width><height>20</height></widget>
  <widget type="led" version="2.0.0"><name>State</name><pv_name>$(P)STATE</pv_name><x>150</x><y>50</y><width>20</width><height>20</height></widget>
  <widget type="progressbar" version="2.0.0"><name>Bar</name><pv_name>$(P)SINE</pv_name><x>10</x><y>110</y><width>200</width><height>20</height></widget>
  <widget type="polyline" version="2.0.0"><name>Pipe</name><x>300</x><y>50</y><width>200</width><height>60</height><line_width>3</line_width>
    <line_color><color red="0" green="0" blue="255"/></line_color><points><point x="0" y="30"/><point x="100" y="30"/><point x="100" y="0"/><point x="200" y="0"/></points></widget>
  <widget type="web_browser" version="2.0.0"><name>Logbook</name><x>300</x><y>200</y><width>200</width><height>60</height></widget>
  <widget type="textentry" version="2.0.0"><name>Gain</name><pv_name>loc://gain(3)</pv_name><x>10</x><y>150</y><width>100</width><height>20</height></widget>
  <widget type="textupdate" version="2.0.0"><name>Double</name><pv_name>=\`loc://gain\`*2</pv_name><x>120</x><y>150</y><width>100</width><height>20</height>
    <rules><rule name="big" prop_id="background_color" out_exp="false"><exp bool_exp="pv0 &gt; 10"><value><color name="MAJOR" red="255" green="0" blue="0"/></value></exp><pv_name>loc://gain</pv_name></rule></rules></widget>
  <widget type="action_button" version="3.0.0"><name>Demo</name><text>EPICS demo</text><actions><action type="open_display"><file>epics-demo.bob</file></action></actions>
    <x>300</x><y>150</y><width>120</width><height>30</height></widget>
</display>`;

/** A Taranta dashboard over the simulated Tango device (positions in its 15 px tiles). */
export const WJ = JSON.stringify({
  name: 'Imported TangoTest',
  version: '1.3.0',
  widget: [
    { id: '1', x: 1, y: 1, width: 20, height: 2, type: 'LABEL', inputs: { text: 'Simulated Tango device' } },
    { id: '2', x: 1, y: 4, width: 14, height: 3, type: 'ATTRIBUTE_DISPLAY', inputs: { attribute: { device: 'sim/test/1', attribute: 'double' } } },
    { id: '3', x: 16, y: 4, width: 14, height: 3, type: 'ATTRIBUTE_WRITER', inputs: { attribute: { device: 'sim/test/1', attribute: 'float' } } },
    { id: '4', x: 31, y: 4, width: 4, height: 3, type: 'LED_DISPLAY', inputs: { attribute: { device: 'sim/test/1', attribute: 'boolean' } } },
    { id: '5', x: 1, y: 8, width: 14, height: 3, type: 'DEVICE_STATUS', inputs: { device: { name: 'sim/test/1' } } },
    { id: '6', x: 16, y: 8, width: 14, height: 3, type: 'COMMAND_EXECUTOR', inputs: { command: { device: 'sim/test/1', command: 'Init' } } },
    { id: '7', x: 1, y: 12, width: 30, height: 15, type: 'ATTRIBUTE_PLOT', inputs: { attributes: [{ attribute: { device: 'sim/test/1', attribute: 'double' } }] } },
    { id: '8', x: 32, y: 12, width: 20, height: 15, type: 'SPECTRUM', inputs: { attribute: { device: 'sim/test/1', attribute: 'spectrum' } } },
  ],
});

/** Converts `data` (named `file`) through the gateway, saves it, returns its screen name and report. */
export async function importAndSave(page: Page, stack: Stack, file: string, data: string, query = ''): Promise<{ name: string; report: any; screen: any }> {
  const editor = { Authorization: `Bearer ${stack.token('importer', ['*'], ['*'])}` };
  const converted = await page.request.post(`${stack.baseUrl}/api/import?file=${file}${query}`, { data, headers: { ...editor, 'Content-Type': 'application/octet-stream' } });
  expect(converted.status()).toBe(200);
  const { name, screen, report } = await converted.json();
  const saved = await page.request.put(`${stack.baseUrl}/api/screens/${name}`, { data: { screen, base_revision: 0, summary: 'imported' }, headers: editor });
  expect(saved.status()).toBe(200);
  return { name, report, screen };
}

/** Opens a saved canvas screen and waits until it is live and drawn. */
export async function openImported(page: Page, stack: Stack, name: string): Promise<void> {
  await page.goto(`${stack.baseUrl}/#/screen/${name}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
}
