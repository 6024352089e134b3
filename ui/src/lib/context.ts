/** App-wide state shared through Svelte context: the gateway connection and the theme. */
import { createContext } from 'svelte';
import type { Gateway } from './transport/gateway.svelte';

export interface Theme {
  dark: boolean;
}

export interface AppContext {
  gateway: Gateway;
  theme: Theme;
  /** ECharts renderer: 'canvas' in browsers, 'svg' under jsdom */
  renderer: 'canvas' | 'svg';
}

export const [getApp, setApp] = createContext<AppContext>();
