/** Widget type (screen files' `type`) → component. One file per widget. */
import type { Component } from 'svelte';
import type { WidgetType } from '../screen';
import type { WidgetProps } from './types';
import Bar from './Bar.svelte';
import Button from './Button.svelte';
import Form from './Form.svelte';
import Gauge from './Gauge.svelte';
import Input from './Input.svelte';
import Label from './Label.svelte';
import Led from './Led.svelte';
import Menu from './Menu.svelte';
import Spectrum from './Spectrum.svelte';
import Text from './Text.svelte';
import Toggle from './Toggle.svelte';
import Trend from './Trend.svelte';
import Xy from './Xy.svelte';

export const WIDGETS: Record<WidgetType, Component<WidgetProps>> = {
  text: Text,
  label: Label,
  led: Led,
  gauge: Gauge,
  bar: Bar,
  trend: Trend,
  spectrum: Spectrum,
  xy: Xy,
  form: Form,
  input: Input,
  button: Button,
  toggle: Toggle,
  menu: Menu,
};

/** Default grid spans (w, h) of each type when the screen gives none. */
export const DEFAULT_SIZE: Record<WidgetType, [number, number]> = {
  text: [12, 1], label: [2, 2], led: [2, 2], gauge: [3, 5], bar: [3, 2],
  trend: [6, 7], spectrum: [6, 7], xy: [6, 7], form: [6, 6],
  input: [4, 2], button: [2, 2], toggle: [2, 2], menu: [3, 2],
};
