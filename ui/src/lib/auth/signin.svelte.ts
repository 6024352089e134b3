/**
 * Signing in with the facility's OpenID Connect provider (docs/user-guide.md,
 * "Sign in"): the authorization-code flow with PKCE (oidc-client-ts) against the
 * provider the gateway names (`GET /api/auth`), the user kept in this tab's
 * sessionStorage, the access token renewed with the refresh token before it
 * expires and handed to the gateway over the open socket.
 *
 * Guarantees: no token in any URL (the provider's answer carries a one-time code,
 * removed from the address at once); an answer this tab did not ask for (another
 * `state`), a code already used, or a return address outside this page is
 * refused with a message; a provider that cannot be reached is said so.
 */
import { UserManager, WebStorageStateStore, type User } from 'oidc-client-ts';
import { setPageToken } from '../token';

/** What the gateway says of sign-in (`GET /api/auth`). */
export interface AuthConfig {
  issuer: string | null;
  client_id: string;
  scope: string;
  anonymous: boolean;
  provider_ok: boolean | null;
  /** the provider's endpoints from its discovery document, as the gateway read it (null: not yet) */
  endpoints?: { authorization_endpoint: string; token_endpoint: string; end_session_endpoint: string | null } | null;
}

/**
 * A token handed to this tab as it is, kept for the tab's life: for gateways
 * with a static key and no provider (and tests). Never read from the URL.
 */
export const HANDED_TOKEN_KEY = 'synoptic.token';

/**
 * The gateway's sign-in settings as they were when this tab went to the provider:
 * on the way back the code is exchanged with them at once, without waiting for
 * `GET /api/auth` (read again meanwhile) nor for the app to be built.
 */
const KEPT_CONFIG_KEY = 'synoptic.auth-config';

/** Seconds before expiry at which the token is renewed: a quarter of its life, 5 to 60 s. */
export function renewLead(lifetimeS: number): number {
  return Math.max(5, Math.min(60, lifetimeS / 4));
}

/** The page to come back to after signing in: a route of this app (`#/…`), else the screen list. */
export function safeReturn(back: unknown): string {
  return typeof back === 'string' && /^#\/[^\s]*$/.test(back) && !back.startsWith('#//') ? back : '#/';
}

/** Why a sign-in failed, in words a person can act on. */
export function failure(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  if (/No matching state/i.test(text)) return 'the answer of the sign-in page was not asked for by this page: sign in again';
  if (/Code not valid|invalid_grant|code.*(used|expired)/i.test(text)) return `the sign-in code was already used or has expired: sign in again (${text})`;
  if (/Failed to fetch|NetworkError|Load failed|network/i.test(text)) return 'the sign-in provider cannot be reached: try again later (reading goes on)';
  return text;
}

interface Claims {
  sub?: string;
  preferred_username?: string;
  name?: string;
  exp?: number;
  iat?: number;
}

function claimsOf(token: string): Claims {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part + '='.repeat((4 - (part.length % 4)) % 4))) as Claims;
  } catch {
    return {};
  }
}

/** The page's base address (the provider sends the browser back here). */
function base(): string {
  return location.origin + location.pathname;
}

/** Whether the address carries the provider's answer (a code or an error, and its state). */
function answering(): boolean {
  const query = new URLSearchParams(location.search);
  return query.has('state') && (query.has('code') || query.has('error'));
}

function keptConfig(): AuthConfig | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEPT_CONFIG_KEY) ?? 'null') as AuthConfig | null;
    return kept?.issuer && kept.endpoints ? kept : null;
  } catch {
    return null;
  }
}

/** An oidc-client-ts manager for the provider the gateway names. */
function managerFor(config: AuthConfig): UserManager {
  const found = config.endpoints;
  return new UserManager({
    authority: config.issuer!,
    // the gateway's copy of the discovery document: no round trip to the provider
    // before its sign-in page, nor before the code is exchanged on the way back
    ...(found ? { metadata: { issuer: config.issuer!, ...found, end_session_endpoint: found.end_session_endpoint ?? undefined } } : {}),
    client_id: config.client_id,
    scope: config.scope,
    redirect_uri: base(),
    post_logout_redirect_uri: base(),
    response_type: 'code',
    userStore: new WebStorageStateStore({ store: sessionStorage }),
    stateStore: new WebStorageStateStore({ store: sessionStorage }),
    automaticSilentRenew: false, // renewed by SignIn, a quarter of the token's life ahead
    monitorSession: false,
    loadUserInfo: false,
  });
}

/** The code exchange begun by {@link exchangeEarly}: its manager and answer. */
let early: { config: AuthConfig; manager: UserManager; user: Promise<User> } | null = null;

/**
 * On the way back from the provider, exchange the code now (call it before the app
 * is mounted: the token request is then under way while the app is built), with the
 * settings kept when the sign-in began. Does nothing on any other page load.
 * Returns whether an exchange began.
 */
export function exchangeEarly(): boolean {
  if (early) return true;
  const config = answering() ? keptConfig() : null;
  if (!config) return false;
  const manager = managerFor(config);
  const user = manager.signinRedirectCallback();
  user.catch(() => undefined); // SignIn.start reports it
  early = { config, manager, user };
  return true;
}

export class SignIn {
  /** the gateway's sign-in settings (null until read, or when it cannot say) */
  config = $state<AuthConfig | null>(null);
  /** the signed-in user's name (null: signed out) */
  user = $state<string | null>(null);
  /** their full name, where the provider gives one */
  name = $state<string | null>(null);
  /** when the access token ends (Unix s) */
  expiresAt = $state<number | null>(null);
  /** why the last sign-in, renewal or sign-out failed */
  error = $state<string | null>(null);
  busy = $state(false);

  #token: string | null = null;
  #manager: UserManager | null = null;
  #fetcher: typeof fetch = (...a) => fetch(...a);
  #timer: ReturnType<typeof setTimeout> | null = null;
  #listeners = new Set<(token: string | null) => void>();

  /**
   * Whether this tab holds a sign-in to read, or comes back from the provider: the
   * socket then waits for it (otherwise it opens at once, anonymous).
   */
  static pending(): boolean {
    const query = new URLSearchParams(location.search);
    if (query.has('state')) return true;
    for (let i = 0; i < sessionStorage.length; i++) if (sessionStorage.key(i)?.startsWith('oidc.user:')) return true;
    return false;
  }

  /** The current access token (null: signed out). */
  token(): string | null {
    return this.#token;
  }

  /** Called with each new token (a renewal: hand it to the socket). */
  onToken(listener: (token: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get available(): boolean {
    return !!this.config?.issuer;
  }

  /**
   * Read the kept sign-in (this tab), finish a sign-in coming back from the
   * provider, and learn from the gateway where to sign in. Resolves once the
   * page knows whether it is signed in.
   */
  async start(fetcher: typeof fetch = (...a) => fetch(...a)): Promise<void> {
    this.#fetcher = fetcher;
    const handed = sessionStorage.getItem(HANDED_TOKEN_KEY);
    if (handed) this.#take(handed);
    const isAnswer = answering();
    // the provider's answer: exchanged with the kept settings while the gateway's are read
    const begun = isAnswer && exchangeEarly() ? early : null;
    early = null;
    const reading = this.#readConfig(fetcher);
    if (begun) {
      this.config = begun.config;
      this.#manager = begun.manager;
      await this.#finish(begun.user);
      const config = await reading;
      if (config) this.#adopt(config);
      return;
    }
    const config = await reading;
    this.config = config;
    if (!config?.issuer) {
      if (isAnswer) this.#clearAddress('#/');
      return;
    }
    this.#manager = managerFor(config);
    if (isAnswer) {
      await this.#finish(this.#manager.signinRedirectCallback());
      return;
    }
    if (handed) return;
    const user = await this.#manager.getUser().catch(() => null);
    if (user && !user.expired) this.#user(user);
    else if (user?.refresh_token) await this.renew();
  }

  async #readConfig(fetcher: typeof fetch): Promise<AuthConfig | null> {
    try {
      const res = await fetcher('api/auth', { cache: 'no-store' });
      return res.ok ? ((await res.json()) as AuthConfig) : null;
    } catch {
      return null;
    }
  }

  /** The gateway's settings read after a sign-in that used the kept ones. */
  #adopt(config: AuthConfig): void {
    const kept = this.config;
    this.config = config;
    if (!config.issuer) this.#manager = null;
    else if (config.issuer !== kept?.issuer || config.client_id !== kept.client_id) this.#manager = managerFor(config);
  }

  /** Go to the provider's sign-in page; come back to the page shown now. */
  async signIn(): Promise<void> {
    if (!this.#manager) return;
    this.busy = true;
    this.error = null;
    try {
      if (!this.config?.endpoints) {
        // the gateway had not read its provider when the page loaded: ask again
        // rather than read the provider's discovery document from here
        const config = await this.#readConfig(this.#fetcher);
        if (config?.issuer && config.endpoints) {
          this.config = config;
          this.#manager = managerFor(config);
        }
      }
      if (this.config) sessionStorage.setItem(KEPT_CONFIG_KEY, JSON.stringify(this.config));
      await this.#manager.signinRedirect({ state: { back: safeReturn(location.hash) } });
    } catch (e) {
      this.busy = false;
      this.error = failure(e);
    }
  }

  /** Sign out here and at the provider; the page comes back signed out. */
  async signOut(): Promise<void> {
    this.#stopTimer();
    sessionStorage.removeItem(HANDED_TOKEN_KEY);
    const manager = this.#manager;
    const user = manager ? await manager.getUser().catch(() => null) : null;
    this.#take(null);
    if (!manager) return;
    await manager.removeUser();
    try {
      await manager.signoutRedirect({ id_token_hint: user?.id_token });
    } catch (e) {
      this.error = `signed out here; the provider could not be told: ${failure(e)}`;
    }
  }

  /** A new access token now (the refresh token); the socket gets it too. */
  async renew(): Promise<void> {
    if (!this.#manager) return;
    try {
      const user = await this.#manager.signinSilent();
      if (user) this.#user(user);
    } catch (e) {
      this.error = `the sign-in could not be renewed: ${failure(e)}`;
      // the gateway keeps reading until the token ends, then says writing is off
    }
  }

  async #finish(answer: Promise<User>): Promise<void> {
    this.busy = true;
    try {
      const user = await answer;
      this.#user(user);
      this.#clearAddress(safeReturn((user.state as { back?: unknown } | undefined)?.back));
    } catch (e) {
      this.error = `sign-in failed: ${failure(e)}`;
      this.#clearAddress('#/');
    } finally {
      this.busy = false;
    }
  }

  /** Remove the provider's answer (code, state) from the address and history. */
  #clearAddress(hash: string): void {
    const before = location.hash;
    history.replaceState(null, '', base() + hash);
    if (location.hash !== before) window.dispatchEvent(new HashChangeEvent('hashchange')); // the router follows
  }

  #user(user: User): void {
    this.#take(user.access_token, user.profile?.name as string | undefined);
  }

  #take(token: string | null, name?: string): void {
    this.#token = token;
    setPageToken(token);
    const claims = token ? claimsOf(token) : {};
    this.user = token ? (claims.preferred_username ?? claims.sub ?? 'signed in') : null;
    this.name = token ? (name ?? claims.name ?? null) : null;
    this.expiresAt = claims.exp ?? null;
    if (token) this.error = null;
    this.#schedule(claims);
    for (const listener of this.#listeners) listener(token);
  }

  #schedule(claims: Claims): void {
    this.#stopTimer();
    if (!this.#manager || !claims.exp) return;
    const lifetime = claims.iat ? claims.exp - claims.iat : 300;
    const due = (claims.exp - renewLead(lifetime)) * 1000 - Date.now();
    this.#timer = setTimeout(() => void this.renew(), Math.max(1000, due));
  }

  #stopTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
