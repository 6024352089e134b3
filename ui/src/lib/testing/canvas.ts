/** What canvas-screen tests share: a ResizeObserver for jsdom and a started gateway on a test socket. */
import { Gateway } from '../transport/gateway.svelte';
import { Socket } from './socket';

// jsdom has no ResizeObserver (a canvas measures the width it is given)
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;

/** A gateway on a test socket, past its hello (reads only). */
export function gateway(): Gateway {
  const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0, schedule: () => {} });
  gw.start();
  gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
  return gw;
}
