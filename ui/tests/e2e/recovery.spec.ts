/** End to end: the gateway dies and comes back; the IOC dies and comes back. */
import { expect, openScreen, test, widget } from './fixtures';

test('killing the gateway shows reconnecting and stale values, then recovers', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const counter = widget(page, 'label', stack.pv('CNT:00000')).locator('[data-role=value]');
  await expect(counter).toHaveAttribute('data-stale', 'false');
  await stack.gateway.kill();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'reconnecting');
  await expect(counter).toHaveAttribute('data-stale', 'true');
  const before = Number((await counter.textContent())!.trim());
  await stack.startGateway();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await expect(counter).toHaveAttribute('data-stale', 'false');
  await expect.poll(async () => Number((await counter.textContent())!.trim())).toBeGreaterThan(before);
});

test('a hung gateway (SIGSTOP: its TCP stays up) is noticed by the page, which recovers when it runs again', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const connection = page.getByTestId('connection');
  const counter = widget(page, 'label', stack.pv('CNT:00000')).locator('[data-role=value]');
  await expect(counter).toHaveAttribute('data-stale', 'false');
  stack.gateway.signal('SIGSTOP');
  try {
    const stopped = Date.now();
    // pings every 3 s, silence limit 6 s: noticed within 9 s
    await expect(connection).toHaveAttribute('data-state', 'reconnecting', { timeout: 15_000 });
    expect(Date.now() - stopped).toBeLessThanOrEqual(12_000);
    await expect(counter).toHaveAttribute('data-stale', 'true');
  } finally {
    stack.gateway.signal('SIGCONT');
  }
  await expect(connection).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await expect(counter).toHaveAttribute('data-stale', 'false');
});

test('a disconnected IOC shows disconnected widgets, then live ones again', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const sine = widget(page, 'label', stack.pv('SINE')).locator('[data-role=value]');
  await expect(sine).toHaveClass(/sev-(ok|minor|major)/);
  await stack.ioc.kill();
  await expect(sine).toHaveClass(/sev-disconnected/, { timeout: 30_000 });
  await expect(widget(page, 'led', stack.pv('STATE')).locator('[data-role=value]')).toHaveClass(/sev-disconnected/);
  await stack.startIoc();
  await expect(sine).toHaveClass(/sev-(ok|minor|major)/, { timeout: 45_000 });
});

test('losing NATS shows "bus down" and stale values, then recovers', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const counter = widget(page, 'label', stack.pv('CNT:00000')).locator('[data-role=value]');
  await expect(counter).toHaveAttribute('data-stale', 'false');
  await stack.nats.kill();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'bus-down');
  await expect(counter).toHaveAttribute('data-stale', 'true');
  await stack.restartNats();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 45_000 });
  await expect(counter).toHaveAttribute('data-stale', 'false', { timeout: 45_000 });
  const now = Number((await counter.textContent())!.trim());
  await expect.poll(async () => Number((await counter.textContent())!.trim()), { timeout: 30_000 }).toBeGreaterThan(now);
});

test('a killed EPICS adapter shows its values stale within 5 s, a restarted one live again', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const counter = widget(page, 'label', stack.pv('CNT:00000')).locator('[data-role=value]');
  await expect(counter).toHaveAttribute('data-stale', 'false');
  await stack.adapter.kill(); // SIGKILL: no goodbye on the bus, only missing heartbeats tell
  const killed = Date.now();
  await expect(counter).toHaveAttribute('data-stale', 'true', { timeout: 5_000 });
  expect(Date.now() - killed).toBeLessThanOrEqual(5_000);
  await counter.hover();
  await expect(counter).toHaveAttribute('title', /no live source/);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live'); // the gateway itself is fine
  const before = Number((await counter.textContent())!.trim());
  await stack.startAdapter(); // a new epoch: its values clear the mark
  await expect(counter).toHaveAttribute('data-stale', 'false', { timeout: 30_000 });
  await expect.poll(async () => Number((await counter.textContent())!.trim()), { timeout: 30_000 }).toBeGreaterThan(before);
});
