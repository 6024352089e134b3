import { render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import ScreenHost from '../testing/ScreenHost.svelte';
import type { Screen } from '../screen';
import { Socket } from '../testing/socket';
import { gateway } from '../testing/canvas';
import { arcPath } from './shape';

const imported: Screen = {
  title: 'Decorations and tabs',
  layout: { type: 'canvas', width: 600, height: 400 },
  widgets: [
    { type: 'shape', box: { x: 10, y: 10, w: 40, h: 20 }, options: { kind: 'ellipse' }, style: { fg: '#0000ff', bg: '#00ff00', line_width: 2 } },
    { type: 'shape', box: { x: 60, y: 10, w: 40, h: 40 }, options: { kind: 'polyline', points: [[0, 0], [40, 40]] }, style: { fg: 'MAJOR' } },
    { type: 'shape', box: { x: 110, y: 10, w: 40, h: 40 }, options: { kind: 'polygon', points: [[0, 40], [20, 0], [40, 40]] } },
    { type: 'shape', box: { x: 160, y: 10, w: 40, h: 20 }, options: { kind: 'arc', start_angle: 0, total_angle: 180 } },
    { type: 'shape', box: { x: 210, y: 10, w: 100, h: 80 }, options: { kind: 'picture', file: 'pic/grasshopper.jpg' } },
    {
      type: 'tabs', box: { x: 10, y: 100, w: 300, h: 200 },
      options: {
        tabs: [
          { title: 'Readback', width: 300, height: 170, widgets: [{ type: 'label', channels: ['ca://$(P)RBV'], box: { x: 5, y: 5, w: 100, h: 20 } }] },
          { title: 'Setpoint', width: 300, height: 170, widgets: [{ type: 'input', channels: ['ca://$(P)VAL'], box: { x: 5, y: 5, w: 100, h: 20 } }] },
        ],
      },
    },
  ],
};

describe('shape widgets', () => {
  it('draw ellipses, lines, polygons and arcs in their box, stroke fg, fill bg; a picture names its file', () => {
    const view = render(ScreenHost, { props: { gateway: gateway(), screen: imported, macros: { P: 'M1:' } } });
    flushSync();
    const shapes = [...view.container.querySelectorAll('.abs.t-shape')] as HTMLElement[];
    expect(shapes).toHaveLength(5);
    const [ellipse, line, polygon, arc, picture] = shapes;
    expect(ellipse.querySelector('svg')!.getAttribute('viewBox')).toBe('0 0 40 20');
    expect(ellipse.querySelector('ellipse')!.getAttribute('rx')).toBe('19');
    expect(ellipse.style.getPropertyValue('--w-fg')).toBe('#0000ff');
    expect(ellipse.style.getPropertyValue('--w-bg')).toBe('#00ff00');
    expect(line.querySelector('polyline')!.getAttribute('points')).toBe('0,0 40,40');
    expect(polygon.querySelector('polygon')!.getAttribute('points')).toBe('0,40 20,0 40,40');
    expect(arc.querySelector('path')!.getAttribute('d')).toBe('M 20 10 L 40 10 A 20 10 0 0 0 0 10 Z');
    expect(picture.querySelector('.w-picture')!.getAttribute('data-file')).toBe('pic/grasshopper.jpg');
    expect(picture.textContent!.trim()).toBe('grasshopper.jpg');
    expect(view.container.querySelector('.t-placeholder')).toBeNull();
  });

  it('a rule colours a shape\'s fill, not its box, and gives its own colour back', () => {
    const gw = gateway();
    const lamp: Screen = { ...imported, widgets: [{ type: 'shape', box: { x: 0, y: 0, w: 20, h: 20 }, options: { kind: 'ellipse' }, style: { bg: '#000000' },
      rules: [{ channel: 'ca://M', op: '==', value: 2, set: { bg: '#ffff00' } }] }] };
    const view = render(ScreenHost, { props: { gateway: gw, screen: lamp } });
    flushSync();
    const box = view.container.querySelector('.abs.t-shape') as HTMLElement;
    const sub = Socket.last.sent.find((f) => f.op === 'sub' && f.ch?.includes('ca://M'))!;
    const val = (v: number) => ({ v, t: Date.now() * 1e6, sev: 0, c: true });
    gw.handle({ op: 'snap', id: sub.id, sid: 7, ch: ['ca://M'], val: [val(2)], meta: [null] });
    flushSync();
    expect(box.style.getPropertyValue('--w-bg')).toBe('#ffff00');
    expect(box.style.backgroundColor).toBe('');
    gw.handle({ op: 'snap', id: sub.id, sid: 7, ch: ['ca://M'], val: [val(0)], meta: [null] });
    flushSync();
    expect(box.style.getPropertyValue('--w-bg')).toBe('#000000');
  });

  it('a picture given with the import shows its image', () => {
    const src = 'data:image/png;base64,iVBORw0KGgo=';
    const withImage: Screen = { ...imported, widgets: [{ type: 'shape', box: { x: 0, y: 0, w: 80, h: 60 }, options: { kind: 'picture', file: 'pic/a.png', src } }] };
    const view = render(ScreenHost, { props: { gateway: gateway(), screen: withImage } });
    flushSync();
    const img = view.container.querySelector('.t-shape img')!;
    expect(img.getAttribute('src')).toBe(src);
    expect(img.getAttribute('alt')).toBe('pic/a.png');
  });

  it('arc paths: counter-clockwise from 3 o\'clock, large sweeps and whole circles', () => {
    expect(arcPath(100, 100, 90, 270)).toBe('M 50 50 L 50 0 A 50 50 0 1 0 100 50 Z');
    expect(arcPath(100, 100, 0, -90)).toBe('M 50 50 L 100 50 A 50 50 0 0 1 50 100 Z');
    expect(arcPath(100, 50, 0, 360)).toContain('A 50 25 0 1 0 100 25');
  });
});

describe('tabbed container', () => {
  it('shows the selected tab\'s own widgets live, with the screen\'s macros, and switches tabs', async () => {
    const view = render(ScreenHost, { props: { gateway: gateway(), screen: imported, macros: { P: 'M1:' } } });
    flushSync();
    await vi.waitFor(() => expect(view.container.querySelector('.w-tabs')).not.toBeNull()); // its own chunk
    const tabs = [...view.container.querySelectorAll('.w-tabs [role=tab]')] as HTMLButtonElement[];
    expect(tabs.map((t) => t.textContent)).toEqual(['Readback', 'Setpoint']);
    const panel = () => view.container.querySelector('.w-tabs [role=tabpanel]')!;
    expect(panel().querySelector('.abs.t-label [data-channel]')!.getAttribute('data-channel')).toBe('ca://M1:RBV');
    expect(Socket.last.sent.some((f) => f.op === 'sub' && (f.ch as string[]).includes('ca://M1:RBV'))).toBe(true);
    tabs[1].click();
    flushSync();
    expect(panel().querySelector('.abs.t-input')).not.toBeNull();
    expect(panel().querySelector('.abs.t-label')).toBeNull();
  });
});
