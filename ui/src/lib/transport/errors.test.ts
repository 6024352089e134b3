import { describe, expect, it } from 'vitest';
import { userMessage } from './errors';

const CODES = ['bad_frame', 'bad_channel', 'too_many_channels', 'too_many_subscriptions', 'frame_too_big', 'rate_limited', 'unknown_sid', 'forbidden', 'unavailable', 'internal', 'unauthorized', 'bad_range'];

describe('userMessage', () => {
  it('never shows a protocol code, and says what to do', () => {
    for (const code of CODES) {
      const text = userMessage(code, 'x');
      expect(text).not.toContain(code);
      expect(text).toMatch(/: .+\.$/);
    }
  });

  it('keeps the details a user can act on', () => {
    expect(userMessage('bad_channel', "unknown scheme 'xx' in 'xx://A'")).toContain("'xx://A'");
    expect(userMessage('forbidden', 'bob may not read ca://X')).toMatch(/^Bob may not read ca:\/\/X: ask/);
  });
});
