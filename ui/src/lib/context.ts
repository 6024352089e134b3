/** App-wide state shared through Svelte context: the gateway connection and the theme. */
import { createContext } from 'svelte';
import type { Gateway } from './transport/gateway.svelte';
import type { AlarmStore } from './alarms/store.svelte';

export interface Theme {
  dark: boolean;
}

export interface AppContext {
  gateway: Gateway;
  theme: Theme;
  /** ECharts renderer: 'canvas' in browsers, 'svg' under jsdom */
  renderer: 'canvas' | 'svg';
  /** the alarms (counts for the header; the list while a page or widget needs it) */
  alarms: AlarmStore;
  /** whether the alarm sound is wanted in this browser */
  sound: { wanted: boolean };
}

export const [getApp, setApp] = createContext<AppContext>();
