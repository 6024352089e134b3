/**
 * Channels the browser serves itself, never sent to the gateway: local values
 * (`loc://`), Phoebus's simulated PVs (`sim://sine(…)` and the other function
 * names below; any other `sim://` name is a bus channel) and formulas (`=…`,
 * `eq://…`). Small and synchronous: the engine that serves them (./engine.ts) loads
 * only when a screen uses one.
 */

/** Phoebus's simulated PV functions (lowercase names as Phoebus spells them). */
export const SIM_FUNCTIONS: ReadonlySet<string> = new Set([
  'sine', 'ramp', 'noise', 'noisewave', 'noiseWaveform', 'flipflop', 'sawtooth', 'sinewave',
  'intermittent', 'strings', 'const', 'gaussianNoise', 'gaussianWave',
]);

/** Whether the browser serves `uri` itself. */
export function isBrowserSide(uri: string): boolean {
  const c = uri.charCodeAt(0);
  if (c === 61 /* = */) return true;
  if (uri.startsWith('loc://') || uri.startsWith('eq://')) return true;
  if (!uri.startsWith('sim://')) return false;
  const m = /^sim:\/\/([A-Za-z]+)(\(.*\))?$/.exec(uri);
  return !!m && SIM_FUNCTIONS.has(m[1]);
}

/** Whether `uri` is a formula. */
export function isFormula(uri: string): boolean {
  return uri.startsWith('=') || uri.startsWith('eq://');
}

/** The channels a formula names in backquotes or single quotes (bare names as ca://), without parsing it. */
export function quotedInputs(uri: string): string[] {
  const out: string[] = [];
  for (const m of uri.matchAll(/`([^`]+)`|'([^']+)'/g)) {
    const n = (m[1] ?? m[2]).trim();
    out.push(n.includes('://') || n.startsWith('=') ? n : `ca://${n}`);
  }
  return out;
}

/** Whether a write to `uri` stays in the browser (local values: no write grant needed). */
export function isLocalWritable(uri: string): boolean {
  return uri.startsWith('loc://');
}
