/** Geometry of `shape` widgets (Phoebus decorations). */

/**
 * The SVG path of a Phoebus arc filling a `w` × `h` box: a pie slice from
 * `start` degrees (0 at 3 o'clock, counter-clockwise) sweeping `total` degrees.
 */
export function arcPath(w: number, h: number, start: number, total: number): string {
  const cx = w / 2;
  const cy = h / 2;
  const sweep = Math.max(-360, Math.min(360, total));
  if (Math.abs(sweep) >= 360) return `M 0 ${cy} A ${cx} ${cy} 0 1 0 ${w} ${cy} A ${cx} ${cy} 0 1 0 0 ${cy} Z`;
  const at = (deg: number) => {
    const r = (deg * Math.PI) / 180;
    return `${round(cx + cx * Math.cos(r))} ${round(cy - cy * Math.sin(r))}`;
  };
  const large = Math.abs(sweep) > 180 ? 1 : 0;
  const dir = sweep >= 0 ? 0 : 1; // counter-clockwise on screen is SVG's negative sweep
  return `M ${cx} ${cy} L ${at(start)} A ${cx} ${cy} 0 ${large} ${dir} ${at(start + sweep)} Z`;
}

const round = (v: number) => Math.round(v * 100) / 100;
