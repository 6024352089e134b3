import { describe, expect, it } from 'vitest';
import { dropBox, overlapping } from './layout';

describe('dropBox: a palette item dropped on a cell', () => {
  const firstRow = [{ x: 1, y: 1, w: 4, h: 2 }];

  it('lands at the column dropped on, cut to the columns (a text at column 11 is not moved to x=1)', () => {
    expect(dropBox(firstRow, 12, { x: 11, y: 1 }, 12, 1)).toEqual({ x: 11, y: 1, w: 2, h: 1 });
  });

  it('never covers a neighbour: an input (4 wide) stops at the widget on its right', () => {
    const label = { x: 7, y: 4, w: 2, h: 2 };
    expect(dropBox([label], 12, { x: 5, y: 4 }, 4, 2)).toEqual({ x: 5, y: 4, w: 2, h: 2 });
    expect(dropBox([label], 12, { x: 5, y: 3 }, 4, 2)).toEqual({ x: 5, y: 3, w: 2, h: 2 }); // cut in width, not in height
  });

  it('is cut in height by a widget below it', () => {
    expect(dropBox([{ x: 1, y: 3, w: 12, h: 1 }], 12, { x: 1, y: 1 }, 3, 5)).toEqual({ x: 1, y: 1, w: 3, h: 2 });
  });

  it('dropped on a widget, goes to the first free row below it', () => {
    expect(dropBox(firstRow, 12, { x: 2, y: 1 }, 2, 2)).toEqual({ x: 2, y: 3, w: 2, h: 2 });
  });

  it('dropped on a section, goes inside it (a section takes no cells), still clear of the widgets in it', () => {
    const section = { x: 1, y: 1, w: 6, h: 4, section: true };
    expect(dropBox([section], 12, { x: 2, y: 2 }, 2, 2)).toEqual({ x: 2, y: 2, w: 2, h: 2 });
    expect(dropBox([section, { x: 2, y: 2, w: 2, h: 2 }], 12, { x: 2, y: 2 }, 2, 2)).toEqual({ x: 2, y: 4, w: 2, h: 2 });
  });

  it('keeps its default size where there is room', () => {
    expect(dropBox(firstRow, 12, { x: 5, y: 1 }, 3, 5)).toEqual({ x: 5, y: 1, w: 3, h: 5 });
  });
});

describe('overlapping', () => {
  it('names both widgets of an overlap, never a section holding widgets', () => {
    const boxes = [
      { x: 1, y: 1, w: 6, h: 4, section: true },
      { x: 1, y: 1, w: 2, h: 2 },
      { x: 2, y: 2, w: 2, h: 2 },
      { x: 5, y: 1, w: 2, h: 2 },
    ];
    expect([...overlapping(boxes)].sort()).toEqual([1, 2]);
  });
});
