/**
 * Hash routes: `#/` screen list, `#/screen/<name>[?MACRO=value&…]`, `#/edit/<name>` (the editor),
 * `#/new` (a new screen), `#/import-site` (import a display set), `#/quick?ch=<uri>,<uri>`, `#/help`,
 * `#/alarms[?area=&q=]` (the alarm page), `#/alarms/tree` (its tree's editor). Works from any static server.
 */
export type Route =
  | { page: 'list' }
  | { page: 'help' }
  | { page: 'import-site' }
  | { page: 'screen'; name: string; query: string }
  | { page: 'edit'; name: string }
  | { page: 'quick'; channels: string[] }
  | { page: 'alarms'; area: string; query: string }
  | { page: 'alarmtree' };

/** Parse a location hash into a route. */
export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const m = /^\/screen\/([^?]+)(?:\?(.*))?$/.exec(path);
  if (m) return { page: 'screen', name: decodeURIComponent(m[1]), query: m[2] ?? '' };
  const e = /^\/edit\/([^?]+)/.exec(path);
  if (e) return { page: 'edit', name: decodeURIComponent(e[1]) };
  if (path === '/new') return { page: 'edit', name: '' };
  if (path.startsWith('/quick')) {
    const query = new URLSearchParams(path.split('?')[1] ?? '');
    return { page: 'quick', channels: (query.get('ch') ?? '').split(',').filter(Boolean) };
  }
  if (path === '/help') return { page: 'help' };
  if (path === '/import-site') return { page: 'import-site' };
  if (path === '/alarms/tree') return { page: 'alarmtree' };
  if (path === '/alarms' || path.startsWith('/alarms?')) {
    const query = new URLSearchParams(path.split('?')[1] ?? '');
    return { page: 'alarms', area: query.get('area') ?? '', query: query.get('q') ?? '' };
  }
  return { page: 'list' };
}

/** The current route, following `hashchange`. */
export class Router {
  route = $state<Route>(parseHash(location.hash));

  constructor() {
    addEventListener('hashchange', () => (this.route = parseHash(location.hash)));
  }
}
