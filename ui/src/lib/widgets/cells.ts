/**
 * Labels and LEDs as plain DOM: the bulk of a large screen (1000 values). A
 * screen builds their cells by cloning one template each, with no component
 * instance per widget, and each cell is as few nodes as it can be: without a
 * caption the grid cell itself is the value box (`data-role=value`), its first
 * child the value's text node, then the unit (labels; an LED's lamp is CSS).
 * Fewer nodes to create, style, lay out and paint when the screen opens.
 * Sections and text (the frames and captions of an imported display: a fifth of
 * its widgets) are plain cells too (`staticCell`), the same elements as their
 * components inside Widget.svelte. Every other widget type is a component.
 */
import { shortName } from '../transport/channels';
import type { ChannelState } from '../transport/channel.svelte';
import type { FormatOptions } from '../format';
import type { WidgetSpec } from '../screen';
import { ledPainter, valuePainter } from './paint';

/** Widget types built as plain cells. */
export const PLAIN_TYPES: ReadonlySet<string> = new Set(['label', 'led', 'section', 'text']);

/** A built cell: its element and the function that stops its painting. */
export interface PlainCell {
  el: HTMLElement;
  release: () => void;
}

/** The grid placement of a widget (`grid-column`/`grid-row`), '' for the default 1×1 auto-placed cell. */
export function placement(spec: WidgetSpec, w: number, h: number): string {
  if (!spec.x && !spec.y && w === 1 && h === 1) return '';
  // the span always on the end side: a narrow screen's reflow (app.css) resets the
  // start lines alone and keeps the spans
  const column = spec.x ? `${spec.x} / span ${w}` : `auto / span ${w}`;
  const row = spec.y ? `${spec.y} / span ${h}` : `auto / span ${h}`;
  return `grid-column: ${column}; grid-row: ${row}`;
}

/** The caption shown above a widget's value: null for compact widgets and text. */
export function captionOf(spec: WidgetSpec, channels: readonly ChannelState[]): string | null {
  if (spec.type === 'text' || (spec.options as { compact?: boolean } | undefined)?.compact) return null;
  return spec.title ?? (channels.length === 1 ? shortName(channels[0].uri) : null);
}

/** The value box of a label (`—` and an empty unit until painted). */
export const LABEL_HTML = '—<span class="u"></span>';
/** The value box of an LED (the lamp is its `::before`). */
export const LED_HTML = '—';

const templates = new Map<string, HTMLElement>();

/** A fresh copy of the value box of `type`, with `classes` (cloned from a template made once). */
function valueBox(type: 'label' | 'led', tag: string, classes: string): HTMLElement {
  const key = `${tag} ${classes}`;
  let proto = templates.get(key);
  if (!proto) {
    proto = document.createElement(tag);
    proto.className = `${classes} sev-none stale`;
    proto.setAttribute('data-role', 'value');
    proto.setAttribute('data-stale', 'true');
    if (type === 'led') proto.setAttribute('data-on', 'false');
    proto.innerHTML = type === 'label' ? LABEL_HTML : LED_HTML;
    templates.set(key, proto);
  }
  return proto.cloneNode(true) as HTMLElement;
}

/**
 * The grid cell of a label or LED widget with its painter watching its channel,
 * or null for any other widget type (or one with no channel).
 */
export function plainCell(spec: WidgetSpec, channels: readonly ChannelState[], size: [number, number] = [1, 1]): PlainCell | null {
  const type = spec.type;
  const ch = channels[0];
  if ((type !== 'label' && type !== 'led') || !ch) return null;
  const caption = captionOf(spec, channels);
  const kind = type === 'label' ? 'w-label' : 'w-led';
  // the cell is the value box itself when there is no caption
  const cellClasses = `cell t-${type}`;
  const cell = caption === null ? valueBox(type, 'section', `${cellClasses} ${kind}`) : document.createElement('section');
  let box = cell;
  if (caption !== null) {
    cell.className = cellClasses;
    const header = document.createElement('header');
    header.textContent = caption;
    header.title = channels.map((c) => c.uri).join('\n');
    box = valueBox(type, 'div', kind);
    cell.append(header, box);
  }
  const base = caption === null ? `${cellClasses} ${kind}` : kind;
  cell.setAttribute('data-widget', type);
  cell.setAttribute('data-channel', ch.uri);
  const [w, h] = [spec.w ?? size[0], spec.h ?? size[1]];
  const place = placement(spec, w, h);
  if (place) cell.style.cssText = place; // not the attribute: the CSP allows no inline style attributes
  const o = (spec.options ?? {}) as FormatOptions & { bit?: number; invert?: boolean };
  const painter =
    type === 'label'
      ? valuePainter(box, base, ch, o, box.firstChild as Text, box.lastElementChild)
      : ledPainter(box, ch, o, base);
  return { el: cell, release: ch.watch(painter) };
}

/**
 * The cell of a section or a text widget as plain DOM (what Widget.svelte renders
 * around Section.svelte and Text.svelte, without a component each), or null for any
 * other type. Nothing in it changes while it is shown.
 */
export function staticCell(spec: WidgetSpec, channels: readonly ChannelState[], size: [number, number] = [2, 1]): PlainCell | null {
  const type = spec.type;
  if (type !== 'section' && type !== 'text') return null;
  const cell = document.createElement('section');
  cell.className = `cell t-${type}`;
  const [w, h] = [spec.w ?? size[0], spec.h ?? size[1]];
  const place = placement(spec, w, h);
  if (place) cell.style.cssText = place;
  cell.setAttribute('data-widget', type);
  if (channels[0]) cell.setAttribute('data-channel', channels[0].uri);
  const caption = captionOf(spec, channels);
  if (caption) {
    const header = document.createElement('header');
    header.title = channels.map((c) => c.uri).join('\n');
    header.textContent = caption;
    cell.append(header);
  }
  const inner = document.createElement('div');
  if (type === 'section') {
    inner.className = 'w-section';
    inner.setAttribute('data-section', spec.title ?? '');
  } else {
    const o = (spec.options ?? {}) as { text?: string; size?: string };
    inner.className = `w-text ${o.size ?? 'normal'}`;
    inner.textContent = o.text ?? spec.title ?? '';
  }
  cell.append(inner);
  return { el: cell, release: () => {} };
}
