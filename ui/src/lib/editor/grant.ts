/**
 * Whether this browser may edit a screen: `GET /api/whoami` names the screen-name
 * globs its principal may write (shell-style, as the gateway checks them). Part of
 * the viewer's bundle (it decides whether edit controls show); asked once per page.
 */
import { pageFetch, pageToken } from '../token';

export { pageToken };

/** A shell-style glob (`*`, `?`, `[…]`, `[!…]`) as an anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let set = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (set[0] === '!') set = '^' + set.slice(1);
        re += `[${set}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether any of `globs` matches `name`. */
export function mayEdit(globs: readonly string[], name: string): boolean {
  return globs.some((g) => globToRegExp(g).test(name));
}


let asked: Promise<string[]> | null = null;

/** The screen globs this browser's principal may edit ([] when none, or when the gateway cannot say). */
export function editableGlobs(fetcher: typeof fetch = pageFetch): Promise<string[]> {
  if (asked) return asked;
  asked = fetcher('api/whoami', { cache: 'no-store' })
    .then((res) => (res.ok ? res.json() : { screens: [] }))
    .then((body: { screens?: unknown }) => (Array.isArray(body.screens) ? body.screens.map(String) : []))
    .catch(() => []);
  return asked;
}
