/**
 * Painters: the hot path of a screen. A painter keeps one widget's DOM in step
 * with its channel's committed state (`ChannelState.watch`) by direct DOM writes,
 * touching a node only when what it shows changed: no reactive graph, no
 * allocation when nothing changed, the tooltip built only on hover.
 */
import { formatValue, ledState, severityClass, severityText, unitOf, type FormatOptions } from '../format';
import type { ChannelState, Painter } from '../transport/channel.svelte';

/** Why a value is not live, in words (empty when it is live). */
export function staleText(ch: ChannelState): string {
  if (!ch.isStale) return '';
  if (ch.sourceDown) return 'stale: no live source (the adapter stopped reporting)';
  return 'stale: not live';
}

/** The tooltip of a value: URI, alarm state, staleness. */
export function describe(ch: ChannelState): string {
  const stale = staleText(ch);
  return `${ch.uri}\n${severityText(ch.current)}${stale ? `\n${stale}` : ''}`;
}

/** `el` itself when it is a text node, else a text node as the only child of `el` (created when missing). */
function textNode(el: Element | Text): Text {
  if (el instanceof Text) return el;
  if (el.firstChild instanceof Text && el.childNodes.length === 1) return el.firstChild;
  el.textContent = '';
  return el.appendChild(document.createTextNode(''));
}

/** Sets `el`'s class (base + severity + stale) and `data-stale`, writing only on change. */
function alarmBox(el: HTMLElement, base: string, ch: ChannelState): (sev: string, stale: boolean) => void {
  let cls = el.className;
  let shown = el.getAttribute('data-stale');
  el.addEventListener('pointerenter', () => (el.title = describe(ch)));
  return (sev, stale) => {
    const next = stale ? `${base} ${sev} stale` : `${base} ${sev}`;
    if (next !== cls) el.className = cls = next;
    const flag = stale ? 'true' : 'false';
    if (flag !== shown) el.setAttribute('data-stale', (shown = flag));
  };
}

/**
 * A formatted value with its unit and alarm state. `el` holds the value text and
 * carries the alarm classes (`base` + severity + stale); `valueEl` (default `el`)
 * is the number (an element, or the text node itself), `unitEl` the unit (when
 * absent the unit follows the number in `valueEl`).
 */
export function valuePainter(
  el: HTMLElement,
  base: string,
  ch: ChannelState,
  o: FormatOptions = {},
  valueEl: Element | Text = el,
  unitEl: Element | null = null,
): Painter {
  const box = alarmBox(el, base, ch);
  const text = textNode(valueEl);
  const unit = unitEl ? textNode(unitEl) : null;
  let shown = text.data;
  let shownUnit = unit?.data ?? '';
  return (c) => {
    const value = c.current;
    const meta = c.currentMeta;
    const u = unitOf(meta, o);
    let t = formatValue(value, meta, o);
    if (unit) {
      if (u !== shownUnit) unit.data = shownUnit = u;
    } else if (u) t = `${t} ${u}`;
    if (t !== shown) text.data = shown = t;
    box(severityClass(value), c.isStale);
  };
}

/**
 * An LED: lamp colour, its words (state label, enum label, on/off) and alarm
 * state. `el` is the LED (class `w-led`, `base` its classes): its first child is
 * the words' text node, the lamp is drawn by CSS (`::before`) in `--lamp`.
 */
export function ledPainter(
  el: HTMLElement,
  ch: ChannelState,
  o: { bit?: number; invert?: boolean; on_color?: string; off_color?: string } = {},
  base = 'w-led',
): Painter {
  const box = alarmBox(el, base, ch);
  const text = el.firstChild instanceof Text ? el.firstChild : el.insertBefore(document.createTextNode(''), el.firstChild);
  let colour = '';
  let on = '';
  let shown = text.data;
  return (c) => {
    const value = c.current;
    const led = ledState(value, c.currentMeta, o);
    const disconnected = value?.c === false;
    const col = disconnected ? 'transparent' : led.colour;
    if (col !== colour) el.style.setProperty('--lamp', (colour = col));
    const words = disconnected ? 'disconnected' : led.text;
    if (words !== shown) text.data = shown = words;
    const lit = String(led.on);
    if (lit !== on) el.setAttribute('data-on', (on = lit));
    box(severityClass(value), c.isStale);
  };
}
