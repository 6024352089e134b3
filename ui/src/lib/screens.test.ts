import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WIDGETS } from './widgets/registry';
import { fetchScreenList, parseUriList, quickLookScreen, screenChannels, type Screen } from './screen';

const root = resolve(__dirname, '../../..');
const screensDir = resolve(root, 'screens');
const schema = resolve(root, 'schemas/synoptic_schemas/json/screen.schema.json');

/** Validate JSON documents against the screen schema with Python's jsonschema (the gateway's validator). */
function validate(docs: unknown[]): string[][] {
  const script = [
    'import json, sys, jsonschema',
    `v = jsonschema.Draft202012Validator(json.load(open(${JSON.stringify(schema)})))`,
    'print(json.dumps([[e.message for e in v.iter_errors(d)] for d in json.load(sys.stdin)]))',
  ].join('\n');
  const out = execFileSync(resolve(root, '.venv/bin/python'), ['-c', script], { input: JSON.stringify(docs) });
  return JSON.parse(out.toString());
}

describe('screen files', () => {
  const files = readdirSync(screensDir).filter((f) => f.endsWith('.json'));
  const screens = files.map((f) => JSON.parse(readFileSync(resolve(screensDir, f), 'utf8')) as Screen);

  it('the demo screens are valid and use only known widget types', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(validate(screens)).toEqual(screens.map(() => []));
    for (const s of screens) for (const w of s.widgets) expect(WIDGETS[w.type]).toBeDefined();
  });

  it('the demo screens together show every widget type (but the importers\' placeholder and shapes)', () => {
    const used = new Set(screens.flatMap((s) => s.widgets.map((w) => w.type)));
    expect([...used].sort()).toEqual(Object.keys(WIDGETS).filter((t) => t !== 'placeholder' && t !== 'shape').sort());
  });

  it('the schema refuses malformed screens', () => {
    const errors = validate([
      { title: 't', widgets: [{ type: 'label', channels: ['ca://A', 'ca://B'] }] },
      { title: 't', widgets: [{ type: 'gauge', channels: ['ca://A'], options: { colour: 'red' } }] },
      { title: 't', widgets: [{ type: 'trend', channels: ['not a uri'] }] },
      { widgets: [] },
    ]);
    for (const e of errors) expect(e.length).toBeGreaterThan(0);
  });

  it('a quick-look screen is a valid screen of the pasted channels', () => {
    const { uris, bad } = parseUriList('ca://SIM:SINE, tango://H:10000/Sim/Test/1/Double\nnonsense ca://SIM:SINE');
    expect(uris).toEqual(['ca://SIM:SINE', 'tango://h:10000/sim/test/1/double']);
    expect(bad).toEqual(['nonsense']);
    const screen = quickLookScreen(uris);
    expect(validate([screen])).toEqual([[]]);
    expect(screenChannels(screen)).toEqual(uris);
  });
});

describe('screen list', () => {
  it('reads the gateway’s list, keeping why a screen is invalid', async () => {
    const body = [
      { name: 'ok', title: 'OK', valid: true, description: 'd' },
      { name: 'bad', valid: false, error: "screen 'bad' is invalid at widgets/0: 'nope' is not one of …" },
    ];
    const fetcher = (async () => new Response(JSON.stringify(body))) as typeof fetch;
    const list = await fetchScreenList(fetcher);
    expect(list[0]).toEqual({ name: 'ok', title: 'OK', description: 'd', error: undefined });
    expect(list[1].error).toMatch(/invalid at widgets\/0/);
  });
});
