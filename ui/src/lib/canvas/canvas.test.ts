import { render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import ScreenHost from '../testing/ScreenHost.svelte';
import type { Screen } from '../screen';
import { expandMacros, expandScreen, queryMacros } from '../macros';
import { canvasScale, textOn } from './place';
import { cssColour, cssFont } from './style';
import { Socket } from '../testing/socket';
import { gateway } from '../testing/canvas';

const canvas: Screen = {
  title: 'Vacuum $(S)',
  macros: { P: 'SR01:', S: 'one' },
  layout: { type: 'canvas', width: 800, height: 400, scale: 'fit-width', background: 'Background' },
  widgets: [
    { type: 'label', channels: ['ca://$(P)PRESSURE'], box: { x: 10, y: 20, w: 120, h: 24 }, style: { fg: 'MAJOR', bg: '#102030', font: 'Header 2', align: 'right' } },
    { type: 'text', box: { x: 10, y: 60, w: 200, h: 20 }, options: { text: 'Sector ${N=7}' } },
    { type: 'placeholder', box: { x: 300, y: 20, w: 80, h: 40 }, options: { original: 'polyline', source: 'bob', width_px: 80, height_px: 40 } },
    { type: 'led', channels: ['ca://$(P)OK'], box: { x: 10, y: 100, w: 20, h: 20 }, visible: false },
    { type: 'link', title: 'Next', box: { x: 500, y: 10, w: 100, h: 30 }, options: { screen: 'vacuum', macros: { P: 'SR02:' }, target: 'tab' } },
  ],
};

describe('canvas screens', () => {
  it('places every widget in its pixel box with its style, macros expanded, the URL winning', () => {
    const gw = gateway();
    const view = render(ScreenHost, { props: { gateway: gw, screen: canvas, macros: { P: 'SR09:' } } });
    flushSync();
    const sub = Socket.last.sent.find((f) => f.op === 'sub')!;
    expect(sub.ch).toEqual(['ca://SR09:PRESSURE', 'ca://SR09:OK']);
    const root = view.container.querySelector('.grid.canvas') as HTMLElement;
    expect(root.style.width).toBe('800px');
    expect(root.style.background).toContain('255, 255, 255'); // Background
    expect(root.style.color).toContain('0, 0, 0'); // dark text on a light canvas
    const boxes = [...root.children] as HTMLElement[];
    expect(boxes.map((b) => b.className)).toEqual(['abs t-label', 'abs t-text', 'abs t-placeholder', 'abs t-led', 'abs t-link']);
    const [label, text, placeholder, led, link] = boxes;
    expect([label.style.left, label.style.top, label.style.width, label.style.height]).toEqual(['10px', '20px', '120px', '24px']);
    expect(label.style.getPropertyValue('--w-fg')).toBe('#ff0000');
    expect(label.style.getPropertyValue('--w-bg')).toBe('#102030');
    expect(label.style.getPropertyValue('--w-font')).toContain('bold 18px');
    expect(label.style.getPropertyValue('--w-align')).toBe('right');
    expect(label.querySelector('[data-channel]')!.getAttribute('data-channel')).toBe('ca://SR09:PRESSURE');
    expect(text.textContent!.trim()).toBe('Sector 7');
    expect(placeholder.textContent).toContain('bob: polyline 80×40');
    expect(led.hidden).toBe(true);
    const a = link.querySelector('a')!;
    expect(a.getAttribute('href')).toBe('#/screen/vacuum?P=SR02%3A&S=one');
    expect(a.getAttribute('target')).toBe('_blank');
  });

  it('scales the canvas as a whole', () => {
    const layout = { type: 'canvas' as const, width: 800, height: 400 };
    expect(canvasScale(layout, 1600, 300)).toBe(2);
    expect(canvasScale({ ...layout, scale: 'fit' }, 1600, 300)).toBe(0.75);
    expect(canvasScale({ ...layout, scale: 'none' }, 1600, 300)).toBe(1);
    expect(textOn('#202020')).toBe('#ffffff');
    expect(textOn(undefined)).toBeNull();
  });

  it('colours and fonts: hex, Phoebus names, unknown refused', () => {
    expect(cssColour('OK')).toBe('#00ff00');
    expect(cssColour('#ABCDEF80')).toBe('#abcdef80');
    expect(cssColour('pink')).toBeNull();
    expect(cssFont('Comment')).toMatch(/^italic 14px/);
    expect(cssFont({ family: 'mono', size: 10, style: 'bold-italic' })).toMatch(/^italic bold 10px .*monospace/);
    expect(cssFont('Nope')).toBeNull();
  });
});

describe('macros', () => {
  it('expands $(P), ${P}, defaults and nested values; leaves unknown ones as written', () => {
    const m = { P: 'SR01:', Q: '$(P)X', LOOP: '$(LOOP)' };
    expect(expandMacros('ca://$(P)A ${P}B $(Q) $(R=def) ${R=d2} $(U)', m)).toBe('ca://SR01:A SR01:B SR01:X def d2 $(U)');
    expect(expandMacros('$(LOOP)', m)).toBe('$(LOOP)');
    expect(queryMacros('P=SR02%3A&bad name=1&N=4')).toEqual({ P: 'SR02:', N: '4' });
  });

  it('returns the same screen when there is nothing to expand', () => {
    const s: Screen = { title: 't', widgets: [{ type: 'label', channels: ['ca://A'] }] };
    expect(expandScreen(s, { P: 'x' })).toBe(s);
    const e = expandScreen({ ...s, widgets: [{ type: 'link', options: { screen: 's$(N)', macros: { Q: '$(P)' } } }] }, { P: 'x', N: '2' });
    expect(e.widgets[0].options).toEqual({ screen: 's2', macros: { Q: 'x' } });
  });
});

describe('rules', () => {
  it('show, hide, colour and retext a widget from a channel\'s value or severity; the first matching rule wins', async () => {
    const gw = gateway();
    const screen: Screen = {
      title: 'r',
      layout: { type: 'canvas', width: 400, height: 200 },
      widgets: [
        {
          type: 'text', box: { x: 0, y: 0, w: 100, h: 20 }, options: { text: 'normal' }, visible: false,
          rules: [
            { channel: 'ca://P', on: 'severity', op: '>=', value: 'major', set: { bg: 'MAJOR', text: 'ALARM', visible: true } },
            { channel: 'ca://P', op: '>', value: 5, set: { visible: true, fg: '#00ff00' } },
            { channel: 'loc://mode<VEnum>(0, "Off", "On")', op: '==', value: 'On', set: { text: 'on' } },
          ],
        },
      ],
    };
    const view = render(ScreenHost, { props: { gateway: gw, screen } });
    flushSync();
    const sub = Socket.last.sent.find((f) => f.op === 'sub')!;
    expect(sub.ch).toEqual(['ca://P']); // the rule's bus channel, not the local one
    const box = view.container.querySelector('.abs') as HTMLElement;
    const text = box.querySelector('.w-text')!;
    expect(box.hidden).toBe(true);
    const val = (v: number, sev = 0) => ({ v, t: Date.now() * 1e6, sev, c: true });
    gw.handle({ op: 'snap', id: sub.id, sid: 1, ch: ['ca://P'], val: [val(7)], meta: [null] });
    flushSync();
    expect(box.hidden).toBe(false);
    expect(box.style.color).toBe('rgb(0, 255, 0)');
    expect(text.textContent).toBe('normal');
    gw.handle({ op: 'snap', id: sub.id, sid: 1, ch: ['ca://P'], val: [val(9, 2)], meta: [null] });
    flushSync();
    expect(box.style.backgroundColor).toBe('rgb(255, 0, 0)');
    expect(text.textContent).toBe('ALARM');
    gw.handle({ op: 'snap', id: sub.id, sid: 1, ch: ['ca://P'], val: [val(1)], meta: [null] });
    flushSync();
    expect(box.hidden).toBe(true); // back to its own visibility
    expect(box.style.backgroundColor).toBe('');
    expect(text.textContent).toBe('normal');
    await gw.put('loc://mode<VEnum>(0, "Off", "On")', 'On');
    gw.flush();
    expect(text.textContent).toBe('on');
  });
});
