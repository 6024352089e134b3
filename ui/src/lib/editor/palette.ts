/** The palette: every widget type the schema knows, with a short description. */
import { WIDGET_TYPES } from './options';

/** The drag-and-drop data type of a palette item (its value: the widget type). */
export const PALETTE_MIME = 'application/x-synoptic-widget';

const HINTS: Record<string, string> = {
  text: 'heading or note',
  label: 'value with units and alarm colour',
  led: 'state lamp',
  gauge: 'dial',
  bar: 'bar with limits',
  trend: 'time plot',
  spectrum: 'array plot',
  xy: 'X against Y',
  form: 'many channels in rows',
  input: 'number or text setpoint',
  button: 'writes one value',
  command: 'runs a Tango command (optional argument)',
  toggle: 'on/off switch',
  menu: 'enum choice',
  section: 'framed group of widgets',
  image: 'detector or camera image',
  table: 'PV Access table or structure',
  placeholder: 'an imported widget without a mapping',
  shape: 'an imported decoration (ellipse, line, polygon, arc, picture)',
  link: 'opens another screen',
  embed: 'another screen inside this one',
  tabs: 'tabs, each showing a screen',
  actions: "a button running an imported widget's actions",
  symbol: 'the picture selected by a value',
  clock: 'the local time',
  alarms: 'alarm summary of an area of the alarm tree',
};

/** Types a screen may hold but nobody places by hand: an importer's stand-in for what it
 * could not map, and the decorations of imported displays. */
export const NOT_IN_PALETTE: ReadonlySet<string> = new Set(['placeholder', 'shape', 'actions', 'symbol']);

export const PALETTE: readonly { type: string; hint: string }[] = WIDGET_TYPES.filter((t) => !NOT_IN_PALETTE.has(t)).map((type) => ({ type, hint: HINTS[type] ?? '' }));
