/**
 * The page's current access token and the reads that carry it. The sign-in
 * (`auth/signin.svelte.ts`) sets it; it never travels in a URL: HTTP requests carry
 * it as a bearer header, the WebSocket in an `auth` frame.
 */

let current: string | null = null;

/** The page's current access token (null: signed out). */
export function pageToken(): string | null {
  return current;
}

/** Set by the sign-in whenever the token changes (sign-in, renewal, sign-out). */
export function setPageToken(token: string | null): void {
  current = token;
}

/**
 * `fetch` with the page's token as a bearer header: every screen read needs it on
 * a gateway that does not allow anonymous access.
 */
export const pageFetch: typeof fetch = (input, init = {}) => {
  const token = pageToken();
  if (!token) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
