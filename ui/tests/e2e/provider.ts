/**
 * The demo's identity provider (Keycloak with the demo realm, from the template
 * `make idp` made) and a gateway that signs people in with it, beside the stack's
 * own gateway (same NATS, same screens bucket): the way `make demo` runs them.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';
import { Proc, freePort } from './procs';
import { test as base } from './fixtures';
import { ROOT, type Stack } from './stack';

const VENV = join(ROOT, '.venv/bin');

export class Provider {
  readonly dir = mkdtempSync(join(tmpdir(), 'synoptic-idp-'));
  port = 0;
  keycloak!: Proc;

  get issuer(): string {
    return `http://127.0.0.1:${this.port}/realms/synoptic`;
  }

  async start(): Promise<this> {
    this.port = await freePort();
    this.keycloak = new Proc('keycloak', [
      join(VENV, 'python'), '-m', 'synoptic_identity.keycloak', 'serve', '--port', String(this.port), '--data', join(this.dir, 'data'),
    ]);
    // a JVM on two busy cores: tens of seconds
    await this.keycloak.waitFor(/Keycloak \S+ on JVM .* started in/, 400_000);
    await this.keycloak.waitFor(/Bootstrap completed/, 400_000);
    return this;
  }

  async stop(): Promise<void> {
    await this.keycloak?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A gateway of the demo's kind on the stack's bus: anonymous reading, sign-in with `provider`, the demo's role file. */
export class SignedGateway {
  port = 0;
  proc!: Proc;
  readonly roles: string;

  /** `issuer`: the provider's (any address: one where nothing listens tests an unreachable provider) */
  constructor(
    readonly stack: Stack,
    readonly issuer: string,
    readonly clientId = 'synoptic-ui',
  ) {
    this.roles = join(mkdtempSync(join(tmpdir(), 'synoptic-roles-')), 'roles.toml');
    copyFileSync(join(ROOT, 'docker/config/roles.toml'), this.roles);
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.port = await freePort();
    this.proc = new Proc('gateway-signin', [
      join(VENV, 'synoptic'), 'gateway', '--host', '127.0.0.1', '--port', String(this.port), '--nats', this.stack.natsUrl,
      '--allow-anonymous', '--oidc-issuer', this.issuer, '--oidc-client-id', this.clientId, '--roles', this.roles,
      '--screens', join(this.stack.dir, 'screens'), '--no-seed-screens', '--ui', join(ROOT, 'ui/dist'),
    ]);
    await this.proc.waitFor(/ready on/, 60_000);
    return this;
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
  }
}

/** Sign in on the page shown (its Sign in button, then the provider's form); back signed in. */
export async function signIn(page: Page, user: string, password = user): Promise<void> {
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#username').fill(user);
  await page.locator('#password').fill(password);
  await page.locator('#kc-login').click();
  await expect(page.getByTestId('signed-in')).toBeVisible({ timeout: 30_000 });
}

/** Sign out; back on the page, signed out. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('signed-in')).toHaveCount(0);
}

/** The stack's tests with the provider and a gateway signing people in with it (one each per worker). */
export const signinTest = base.extend<object, { provider: Provider; signed: SignedGateway }>({
  provider: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const provider = await new Provider().start();
      try {
        await use(provider);
      } finally {
        await provider.stop();
      }
    },
    { scope: 'worker', timeout: 420_000 },
  ],
  signed: [
    async ({ stack, provider }, use) => {
      const gateway = await new SignedGateway(stack, provider.issuer).start();
      try {
        await use(gateway);
      } finally {
        await gateway.stop();
      }
    },
    { scope: 'worker', timeout: 120_000 },
  ],
});
