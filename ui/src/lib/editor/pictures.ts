/**
 * Pictures given with an import: an imported display names its image files
 * (`shape` widgets of kind `picture`, `options.file`), which the gateway cannot
 * fetch. Images chosen with the display are put into those widgets as data URLs
 * (`options.src`), matched by path or, failing that, by file name.
 */
import type { Screen, WidgetSpec } from '../screen';

/** Largest image put into a screen (bytes of the file). */
export const MAX_PICTURE_BYTES = 512 * 1024;
/** Image types a picture may hold (what `img` shows without running anything). */
export const PICTURE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', webp: 'image/webp',
};

/** The MIME type of an image file by its suffix, or null when it is not one. */
export function pictureType(name: string): string | null {
  return PICTURE_TYPES[name.split('.').pop()?.toLowerCase() ?? ''] ?? null;
}

const baseName = (path: string) => path.replace(/\\/g, '/').split('/').pop() ?? path;

/**
 * `screen` with the pictures whose file is among `images` (name → data URL)
 * filled in, and the files used; widgets of tabs are searched too. The screen
 * itself is left as it was.
 */
export function attachPictures(screen: Screen, images: ReadonlyMap<string, string>): { screen: Screen; attached: string[] } {
  const byBase = new Map([...images].map(([name, url]) => [baseName(name), url]));
  const attached = new Set<string>();
  const visit = (widgets: WidgetSpec[]): WidgetSpec[] =>
    widgets.map((w) => {
      const o = (w.options ?? {}) as Record<string, unknown>;
      if (w.type === 'shape' && o.kind === 'picture' && typeof o.file === 'string') {
        const url = images.get(o.file) ?? byBase.get(baseName(o.file));
        if (url) {
          attached.add(o.file);
          return { ...w, options: { ...o, src: url } };
        }
      }
      if (w.type === 'tabs' && Array.isArray(o.tabs)) {
        const tabs = (o.tabs as { widgets?: WidgetSpec[] }[]).map((t) => (t.widgets ? { ...t, widgets: visit(t.widgets) } : t));
        return { ...w, options: { ...o, tabs } };
      }
      return w;
    });
  return { screen: { ...screen, widgets: visit(screen.widgets) }, attached: [...attached] };
}

/** A file as a data URL of its image type; an error naming it when it is too large or not an image. */
export async function pictureUrl(file: File): Promise<string> {
  const type = pictureType(file.name);
  if (!type) throw new Error(`${file.name}: not an image (${Object.keys(PICTURE_TYPES).join(', ')})`);
  if (file.size > MAX_PICTURE_BYTES) throw new Error(`${file.name}: ${file.size} bytes exceed ${MAX_PICTURE_BYTES}`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return `data:${type};base64,${btoa(binary)}`;
}
