/**
 * Colours and fonts of screen widgets (`style`): `#rrggbb[aa]`, the Phoebus named
 * colours, the Phoebus named fonts or family/size/style.
 */

/** Phoebus's named colours (its default colour definitions). */
export const NAMED_COLOURS: Readonly<Record<string, string>> = {
  OK: '#00ff00', MINOR: '#ff8000', MAJOR: '#ff0000', INVALID: '#ff00ff', DISCONNECTED: '#c800c8',
  Attention: '#ffa000', Background: '#ffffff', Read_Background: '#f0f0f0', Write_Background: '#80ffff',
  Text: '#000000', On: '#00ff00', Off: '#3c643c', Header_Background: '#4d4d4d', Header_Foreground: '#ffffff',
  Grid: '#808080', Button_Background: '#d2d2d2', Active_Text: '#ffff00', STOP: '#ff0000',
};

export interface FontSpec {
  family?: string;
  size?: number;
  style?: 'regular' | 'bold' | 'italic' | 'bold-italic';
}

/** Phoebus's named fonts. */
export const NAMED_FONTS: Readonly<Record<string, FontSpec>> = {
  Default: { family: 'sans', size: 14, style: 'regular' },
  'Default Bold': { family: 'sans', size: 14, style: 'bold' },
  'Header 1': { family: 'sans', size: 22, style: 'bold' },
  'Header 2': { family: 'sans', size: 18, style: 'bold' },
  'Header 3': { family: 'sans', size: 16, style: 'bold' },
  Comment: { family: 'sans', size: 14, style: 'italic' },
  Fine: { family: 'sans', size: 12, style: 'regular' },
  Oddball: { family: 'serif', size: 40, style: 'regular' },
};

export interface WidgetStyle {
  fg?: string;
  bg?: string;
  font?: string | FontSpec;
  align?: 'left' | 'center' | 'right';
  valign?: 'top' | 'middle' | 'bottom';
  border?: { width?: number; color?: string };
  transparent?: boolean;
  line_width?: number;
}

/** A CSS colour of a screen colour (named or hex), or null when it is neither. */
export function cssColour(colour: string | undefined): string | null {
  if (!colour) return null;
  if (/^#[0-9a-f]{6}([0-9a-f]{2})?$/i.test(colour)) return colour.toLowerCase();
  return NAMED_COLOURS[colour] ?? null;
}

const FAMILIES: Record<string, string> = {
  sans: '"Liberation Sans", Arial, Helvetica, sans-serif',
  serif: '"Liberation Serif", "Times New Roman", serif',
  mono: '"Liberation Mono", "DejaVu Sans Mono", monospace',
};

/** The CSS `font` shorthand of a screen font, or null. */
export function cssFont(font: string | FontSpec | undefined): string | null {
  if (!font) return null;
  const spec = typeof font === 'string' ? NAMED_FONTS[font] : font;
  if (!spec) return null;
  const style = spec.style ?? 'regular';
  const italic = style.includes('italic') ? 'italic ' : '';
  const bold = style.includes('bold') ? 'bold ' : '';
  const name = spec.family ?? 'sans';
  const family = FAMILIES[name.toLowerCase()] ?? `"${name.replace(/["\\]/g, '')}", sans-serif`;
  return `${italic}${bold}${spec.size ?? 14}px ${family}`;
}

/** Apply a widget's style to its element (CSSOM: no inline style attribute). */
export function applyStyle(el: HTMLElement, style: WidgetStyle | undefined): void {
  if (!style) return;
  const s = el.style;
  const fg = cssColour(style.fg);
  const bg = cssColour(style.bg);
  const font = cssFont(style.font);
  if (fg) s.setProperty('--w-fg', fg);
  if (bg && !style.transparent) s.setProperty('--w-bg', bg);
  if (style.transparent) s.setProperty('--w-bg', 'transparent');
  if (font) s.setProperty('--w-font', font);
  if (style.align) s.setProperty('--w-align', style.align);
  if (style.valign) s.setProperty('--w-valign', { top: 'flex-start', middle: 'center', bottom: 'flex-end' }[style.valign]);
  const border = style.border;
  if (border && (border.width ?? 0) > 0) s.setProperty('--w-border', `${border.width}px solid ${cssColour(border.color) ?? 'currentColor'}`);
}
