/** The page's token (`?access_token=`) and the reads that carry it. */

/** The page's token (`?access_token=`), as the gateway connection uses it. */
export function pageToken(): string | null {
  return new URLSearchParams(location.search).get('access_token');
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
