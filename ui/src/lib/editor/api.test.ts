import { describe, expect, it } from 'vitest';
import type { Screen } from '../screen';
import { InvalidStoredScreen, ScreensApi } from './api';

const screen: Screen = { title: 's', widgets: [] };

/** A gateway that never answers until the request is aborted. */
const silent: typeof fetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
  });

const answering = (status: number, body: unknown): typeof fetch => async () =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('ScreensApi writes', () => {
  it('gives up on a gateway that does not answer, as the store being unavailable', async () => {
    const api = new ScreensApi(null, silent, 'api', 30);
    const started = performance.now();
    const result = await api.save('s', screen, 3, '');
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ ok: false, error: 'store_unavailable' });
    expect(!result.ok && 'reason' in result && result.reason).toContain('did not answer within 0.03 s');
  });

  it('maps the gateway answers to typed results', async () => {
    const at = '2026-11-25T10:00:00Z';
    expect(await new ScreensApi(null, answering(200, { name: 's', revision: 4, at, by: 'a' })).save('s', screen, 3, ''))
      .toEqual({ ok: true, name: 's', revision: 4, at, by: 'a' });
    expect(await new ScreensApi(null, answering(409, { revision: 5, by: 'b', at })).save('s', screen, 3, ''))
      .toEqual({ ok: false, error: 'conflict', revision: 5, by: 'b', at });
    expect(await new ScreensApi(null, answering(503, { error: 'store_unavailable', reason: 'NATS is down' })).remove('s', 3))
      .toEqual({ ok: false, error: 'store_unavailable', reason: 'NATS is down' });
  });

  it('says when the gateway cannot be reached', async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError('Failed to fetch');
    };
    const result = await new ScreensApi(null, refused).save('s', screen, 0, '');
    expect(result).toMatchObject({ ok: false, error: 'store_unavailable', reason: 'the gateway cannot be reached (Failed to fetch)' });
  });
});

describe('ScreensApi load', () => {
  it('a stored screen failing the schema comes back as where, why and its revision, for repair', async () => {
    const invalid = { error: 'invalid', reason: "'dial' is not one of …", pointer: '/widgets/1/type', revision: 7, editable: true };
    const err = await new ScreensApi(null, answering(422, invalid)).load('s').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStoredScreen);
    expect(err).toMatchObject({ pointer: '/widgets/1/type', revision: 7, editable: true, reason: invalid.reason });
    // an answer without the revision (an older gateway): a plain error, as before
    const plain = await new ScreensApi(null, answering(422, { error: 'invalid', reason: 'bad' })).load('s').catch((e: unknown) => e);
    expect(plain).not.toBeInstanceOf(InvalidStoredScreen);
    expect((plain as Error).message).toBe('422: bad');
  });
});
