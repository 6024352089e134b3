/**
 * Channel URI normalisation, the same rules as synoptic_schemas.channels:
 * flat protocols keep the name verbatim; Tango is lower-cased, gets port 10000
 * when none is given, and drops a trailing `#dbase=no`.
 */
const FLAT = new Set(['ca', 'pva', 'sim']);

/** The normalised form of a channel URI, or null when it is not one. */
export function normaliseUri(uri: string): string | null {
  const text = uri.trim();
  const m = /^([a-zA-Z]+):\/\/(.+)$/.exec(text);
  if (!m) return null;
  const proto = m[1].toLowerCase();
  const name = m[2];
  if (FLAT.has(proto)) return /\s/.test(name) ? null : `${proto}://${name}`;
  if (proto !== 'tango') return null;
  const parts = name.replace(/#dbase=no$/i, '').toLowerCase().split('/');
  if (parts.length !== 5 || parts.some((p) => p.trim() === '')) return null;
  if (!parts[0].includes(':')) parts[0] = `${parts[0]}:10000`;
  return `tango://${parts.join('/')}`;
}

/** A short display name: the PV name, or the Tango device/attribute without the host. */
export function shortName(uri: string): string {
  const m = /^[a-z]+:\/\/(.+)$/.exec(uri);
  if (!m) return uri;
  if (uri.startsWith('tango://')) return m[1].split('/').slice(1).join('/');
  return m[1];
}
