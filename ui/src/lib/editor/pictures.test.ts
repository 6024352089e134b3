import { describe, expect, it } from 'vitest';
import type { Screen } from '../screen';
import { attachPictures, MAX_PICTURE_BYTES, pictureType, pictureUrl } from './pictures';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const screen: Screen = {
  title: 'pictures',
  layout: { type: 'canvas', width: 400, height: 300 },
  widgets: [
    { type: 'shape', box: { x: 0, y: 0, w: 50, h: 50 }, options: { kind: 'picture', file: 'pic/logo.png' } },
    { type: 'shape', box: { x: 60, y: 0, w: 50, h: 50 }, options: { kind: 'picture', file: 'other.jpg' } },
    { type: 'shape', box: { x: 0, y: 60, w: 50, h: 50 }, options: { kind: 'ellipse' } },
    { type: 'tabs', box: { x: 0, y: 120, w: 300, h: 150 }, options: { tabs: [{ title: 'A', widgets: [{ type: 'shape', box: { x: 0, y: 0, w: 20, h: 20 }, options: { kind: 'picture', file: 'logo.png' } }] }] } },
  ],
};

describe('pictures given with an import', () => {
  it('fill the pictures naming them, by path or by file name, in tabs too; the rest stay frames', () => {
    const { screen: filled, attached } = attachPictures(screen, new Map([['logo.png', PNG]]));
    const [logo, other, ellipse, tabs] = filled.widgets;
    expect(logo.options).toEqual({ kind: 'picture', file: 'pic/logo.png', src: PNG });
    expect(other.options).toEqual({ kind: 'picture', file: 'other.jpg' });
    expect(ellipse).toBe(screen.widgets[2]);
    expect((tabs.options as { tabs: { widgets: { options: unknown }[] }[] }).tabs[0].widgets[0].options).toEqual({ kind: 'picture', file: 'logo.png', src: PNG });
    expect(attached.sort()).toEqual(['logo.png', 'pic/logo.png']);
    expect(screen.widgets[0].options).toEqual({ kind: 'picture', file: 'pic/logo.png' }); // not changed in place
  });

  it('read image files as data URLs of their type; refuse others and large ones', async () => {
    expect(pictureType('a/B.JPG')).toBe('image/jpeg');
    expect(pictureType('x.bob')).toBeNull();
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    expect(await pictureUrl(new File([bytes], 'p.png'))).toBe('data:image/png;base64,iVBORw==');
    await expect(pictureUrl(new File(['x'], 'notes.txt'))).rejects.toThrow('notes.txt: not an image');
    await expect(pictureUrl(new File([new Uint8Array(MAX_PICTURE_BYTES + 1)], 'big.png'))).rejects.toThrow('big.png');
  });
});
