import { render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import ScreenHost from './testing/ScreenHost.svelte';
import Host from './testing/Host.svelte';
import type { WidgetSpec } from './screen';
import { staticCell } from './widgets/cells';
import { Gateway } from './transport/gateway.svelte';
import type { MetaMsg, ValueMsg } from './transport/protocol';
import type { Screen } from './screen';
import { Socket } from './testing/socket';

const val = (v: unknown, sev = 0): ValueMsg => ({ v, t: Date.now() * 1e6, sev, c: true, st: '' });

const screen: Screen = {
  title: 't',
  layout: { columns: 4 },
  widgets: [
    { type: 'label', channels: ['ca://A'], w: 1, h: 1, options: { compact: true } },
    { type: 'led', channels: ['ca://B'], w: 1, h: 1, options: { compact: true } },
    { type: 'bar', channels: ['ca://A'], w: 2, h: 1 },
    { type: 'label', channels: ['ca://C'], x: 1, y: 2, w: 2, h: 1 },
  ],
};


function open() {
  const pending: (() => void)[] = [];
  const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0, schedule: (cb) => pending.push(cb) });
  gw.start();
  gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
  const view = render(ScreenHost, { props: { gateway: gw, screen } });
  flushSync();
  const sub = Socket.last.sent.find((f) => f.op === 'sub')!;
  expect(sub.ch).toEqual(['ca://A', 'ca://B', 'ca://C']);
  const snap = (val: ValueMsg[], meta: (MetaMsg | null)[]) => {
    gw.handle({ op: 'snap', id: sub.id, sid: 7, ch: sub.ch!, val, meta });
    flushSync();
  };
  return { gw, view, snap, frame: () => pending.splice(0).forEach((cb) => cb()) };
}

describe('screen grid', () => {
  it('builds every widget in screen order; a compact label or LED is one cell that is its value box', () => {
    const { view } = open();
    const cells = [...view.container.querySelectorAll('.grid > section.cell')] as HTMLElement[];
    expect(cells.map((c) => `${c.dataset.widget} ${c.dataset.channel}`)).toEqual(['label ca://A', 'led ca://B', 'bar ca://A', 'label ca://C']);
    const [label, led, bar, captioned] = cells;
    expect(label.getAttribute('data-role')).toBe('value');
    expect(label.getAttribute('style')).toBeNull(); // 1×1, auto-placed
    expect(label.firstChild).toBeInstanceOf(Text);
    expect(label.childElementCount).toBe(1); // the unit
    expect(led.getAttribute('data-role')).toBe('value');
    expect(led.childElementCount).toBe(0); // the lamp is CSS
    expect(bar.getAttribute('style')).toContain('span 2');
    expect(captioned.getAttribute('style')).toBe('grid-column: 1 / span 2; grid-row: 2 / span 1;');
    expect(captioned.querySelector('header')!.textContent).toBe('C');
    expect(captioned.querySelector('[data-role=value]')!.classList.contains('w-label')).toBe(true);
    for (const c of [label, led]) expect(c.getAttribute('data-stale')).toBe('true');
  });

  it('paints values, units, alarms and staleness into the plain cells, once per frame, in place', () => {
    const { gw, view, snap, frame } = open();
    snap([val(1.5), val(1), val(3)], [{ dt: 'f8', shape: [], w: false, unit: 'mm', prec: 2 }, null, null]);
    const label = view.container.querySelector('[data-channel="ca://A"][data-widget=label]') as HTMLElement;
    const led = view.container.querySelector('[data-channel="ca://B"]') as HTMLElement;
    const text = label.firstChild as Text;
    expect(text.data).toBe('1.50');
    expect(label.querySelector('.u')!.textContent).toBe('mm');
    expect(label.className).toBe('cell t-label w-label sev-ok');
    expect(label.getAttribute('data-stale')).toBe('false');
    expect(led.textContent).toBe('on');
    expect(led.getAttribute('data-on')).toBe('true');
    expect(led.style.getPropertyValue('--lamp')).not.toBe('');
    expect(view.container.querySelector('.grid')!.getAttribute('data-ready')).toBe('true');
    gw.handle({ op: 'upd', sid: 7, i: [0, 1], val: [val(2.25, 2), val(0)] });
    expect(text.data).toBe('1.50'); // not before the frame
    frame();
    expect(label.firstChild).toBe(text); // painted in place
    expect(text.data).toBe('2.25');
    expect(label.className).toBe('cell t-label w-label sev-major');
    expect(led.textContent).toBe('off');
    gw.handle({ op: 'src', sid: 7, i: [0], up: false });
    frame();
    expect(label.getAttribute('data-stale')).toBe('true');
    expect(label.classList.contains('stale')).toBe(true);
  });

  it('stops painting when the screen goes', () => {
    const { gw, view, snap, frame } = open();
    snap([val(1), val(1), val(1)], [null, null, null]);
    const label = view.container.querySelector('[data-channel="ca://A"][data-widget=label]') as HTMLElement;
    view.unmount();
    gw.handle({ op: 'upd', sid: 7, i: [0], val: [val(5)] });
    frame();
    expect(label.firstChild!.textContent).toBe('1.000'); // the snapshot's, not 5
  });

  it('builds sections and text as plain cells, the same elements as their components', () => {
    const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0 });
    const specs: WidgetSpec[] = [
      { type: 'section', title: 'Group 1', x: 1, y: 2, w: 3, h: 2 },
      { type: 'section', w: 2, h: 1 },
      { type: 'text', options: { text: 'Pressures', size: 'heading' }, w: 4, h: 1 },
      { type: 'text', title: 'a title' },
    ];
    for (const spec of specs) {
      const component = render(Host, { props: { gateway: gw, spec } }).container.querySelector('section.cell')!;
      const plain = staticCell(spec, [], spec.type === 'text' ? [12, 1] : [6, 4])!.el;
      // Svelte writes the place as an attribute, the plain cell as properties: compare the place alone
      expect(plain.style.cssText).toBe(component.getAttribute('style') ?? '');
      plain.removeAttribute('style');
      component.removeAttribute('style');
      // (whitespace between the elements of a flex cell is not rendered)
      const strip = (html: string) => html.replace(/<!---->/g, '').replace(/>\s+</g, '><').replace(/ class="([^"]*?)\s*svelte-\w+"/g, ' class="$1"');
      expect(plain.outerHTML).toBe(strip(component.outerHTML));
    }
    expect(staticCell({ type: 'label', channels: ['ca://A'] }, [])).toBeNull();
  });

  it('a screen built before its subscription left is built once (in slices when large) and revealed after its last slice and snapshot', async () => {
    for (const n of [20, 250]) {
      const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0, schedule: () => {} });
      const widgets = Array.from({ length: n }, (_, i) => ({ type: 'label' as const, channels: [`ca://B${i}`], w: 1, h: 1, options: { compact: true } }));
      const view = render(ScreenHost, { props: { gateway: gw, screen: { title: 'big', layout: { columns: 10 }, widgets } } });
      flushSync();
      const grid = view.container.querySelector('.grid')!;
      expect(grid.children.length).toBe(Math.min(n, 100)); // a large one: the first slice, the rest in later tasks
      await vi.waitFor(() => expect(grid.children.length).toBe(n));
      gw.start(); // the socket opens: the subscription leaves
      gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
      const sub = Socket.last.sent.find((f) => f.op === 'sub')!;
      expect(grid.classList.contains('unrevealed')).toBe(true);
      gw.handle({ op: 'snap', id: sub.id, sid: 7, ch: sub.ch!, val: sub.ch!.map(() => val(1)), meta: sub.ch!.map(() => null) });
      flushSync();
      expect(grid.children.length).toBe(n); // not built again when the snapshot came
      expect(grid.classList.contains('unrevealed')).toBe(false);
      expect(grid.querySelector('[data-stale=true]')).toBeNull();
      view.unmount();
      gw.close();
    }
  });
});
