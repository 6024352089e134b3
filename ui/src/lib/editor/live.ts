/**
 * A widget's live content inside the editor: the viewer's own cell (a plain
 * label/LED cell or the widget's component), filling its box. Values keep
 * updating while the screen is edited.
 */
import { mount, unmount } from 'svelte';
import Widget from '../Widget.svelte';
import type { WidgetSpec } from '../screen';
import type { Gateway } from '../transport/gateway.svelte';
import { plainCell } from '../widgets/cells';
import { channelRange } from './options';
import { expandScreen, type Macros } from '../macros';

/** The spec with the screen's macro references expanded (the stored one keeps them): what the widget shows live. */
export function expandSpec(spec: WidgetSpec, macros: Macros | undefined): WidgetSpec {
  if (!macros || !Object.keys(macros).length) return spec;
  return expandScreen({ title: '', widgets: [spec] }, macros).widgets[0];
}

/** Mount `spec`'s widget into `el` (a 1×1 grid); returns its release. */
export function mountLive(el: HTMLElement, spec: WidgetSpec, gateway: Gateway, context: Map<unknown, unknown>): () => void {
  const { x: _x, y: _y, w: _w, h: _h, ...rest } = spec;
  const inner: WidgetSpec = rest; // placed by the editor's box, not by the grid
  const channels = (spec.channels ?? []).map((u) => gateway.channel(u));
  if (channels.length < channelRange(spec.type)[0]) {
    // not bound yet: a placeholder, not a widget without its channel
    const box = document.createElement('section');
    box.className = 'cell ed-unbound';
    box.setAttribute('data-widget', spec.type);
    box.textContent = `${spec.title ?? spec.type}: no channel`;
    el.append(box);
    return () => box.remove();
  }
  const cell = plainCell(inner, channels, [1, 1]);
  if (cell) {
    el.append(cell.el);
    return cell.release;
  }
  const widget = mount(Widget, { target: el, props: { spec: { ...inner, w: 1, h: 1 }, channels }, context });
  return () => void unmount(widget);
}

/** What a widget shows, without where: a change of it remounts the widget, a move does not. */
export function contentKey(spec: WidgetSpec): string {
  const { x: _x, y: _y, w: _w, h: _h, ...rest } = spec;
  return JSON.stringify(rest);
}
