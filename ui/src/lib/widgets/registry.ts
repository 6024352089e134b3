/**
 * Widget type (screen files' `type`) → component. One file per widget. Chart
 * widgets load on first use (their own chunk, with ECharts), so a screen of
 * labels and LEDs never downloads or parses the charting library.
 */
import type { Component } from 'svelte';
import type { WidgetType } from '../screen';
import type { WidgetProps } from './types';
import Alarms from './Alarms.svelte';
import Bar from './Bar.svelte';
import Button from './Button.svelte';
import Command from './Command.svelte';
import Form from './Form.svelte';
import Input from './Input.svelte';
import Label from './Label.svelte';
import Led from './Led.svelte';
import Menu from './Menu.svelte';
import Link from './Link.svelte';
import Placeholder from './Placeholder.svelte';
import Section from './Section.svelte';
import Shape from './Shape.svelte';
import Table from './Table.svelte';
import Text from './Text.svelte';
import Toggle from './Toggle.svelte';
import Actions from './Actions.svelte';
import Symbol from './Symbol.svelte';
import Clock from './Clock.svelte';

type Loader = () => Promise<{ default: Component<WidgetProps> }>;

/** A component, or a loader of one (charts). */
export type WidgetEntry = { component: Component<WidgetProps> } | { load: Loader };

export const WIDGETS: Record<WidgetType, WidgetEntry> = {
  text: { component: Text },
  label: { component: Label },
  led: { component: Led },
  gauge: { load: () => import('./Gauge.svelte') },
  bar: { component: Bar },
  trend: { load: () => import('./Trend.svelte') },
  spectrum: { load: () => import('./Spectrum.svelte') },
  xy: { load: () => import('./Xy.svelte') },
  form: { component: Form },
  input: { component: Input },
  button: { component: Button },
  command: { component: Command },
  toggle: { component: Toggle },
  menu: { component: Menu },
  section: { component: Section },
  image: { load: () => import('./Image.svelte') },
  table: { component: Table },
  placeholder: { component: Placeholder },
  shape: { component: Shape },
  link: { component: Link },
  // screens inside a widget: their own chunk (a screen without them never loads it)
  embed: { load: () => import('./Embed.svelte') },
  tabs: { load: () => import('./Tabs.svelte') },
  actions: { component: Actions },
  symbol: { component: Symbol },
  clock: { component: Clock },
  alarms: { component: Alarms },
};

/** Default grid spans (w, h) of each type when the screen gives none. */
export const DEFAULT_SIZE: Record<WidgetType, [number, number]> = {
  text: [12, 1], label: [2, 2], led: [2, 2], gauge: [3, 5], bar: [3, 2],
  trend: [6, 7], spectrum: [6, 7], xy: [6, 7], form: [6, 6],
  input: [4, 2], button: [2, 2], command: [3, 2], toggle: [2, 2], menu: [3, 2], section: [6, 4],
  image: [6, 12], table: [6, 6], placeholder: [2, 2], shape: [2, 2],
  link: [2, 1], embed: [6, 8], tabs: [12, 10], actions: [2, 1], symbol: [2, 2], clock: [2, 2], alarms: [3, 3],
};
