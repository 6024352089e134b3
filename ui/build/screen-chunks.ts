/**
 * Build plugin: tells index.html which files each lazily loaded widget type needs
 * (its chunk and every chunk it imports, e.g. ECharts), as a JSON data block
 * `<script type="application/json" id="synoptic-chunks">{"gauge": ["assets/…", …]}`.
 * index.html's early script preloads (`modulepreload`) the files of the widget types
 * a screen uses as soon as the screen file is in, instead of the app discovering
 * them after its own bundle has loaded and run. Screens without charts load none.
 */
import type { Plugin } from 'vite';

/** Lazy widget modules: `src/lib/widgets/<Name>.svelte` → widget type `<name>`. */
const WIDGET = /\/src\/lib\/widgets\/([A-Za-z]+)\.svelte$/;

interface ChunkLike {
  type: 'chunk' | 'asset';
  fileName: string;
  facadeModuleId?: string | null;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
}

/** Widget type → the chunk files it needs (its own first), from a build's bundle. */
export function widgetChunks(bundle: Record<string, ChunkLike>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const chunk of Object.values(bundle)) {
    if (chunk.type !== 'chunk' || !chunk.isDynamicEntry) continue;
    const m = WIDGET.exec(chunk.facadeModuleId ?? '');
    if (!m) continue;
    const need: string[] = [];
    const visit = (file: string) => {
      // the app's entry is loaded already
      if (need.includes(file) || bundle[file]?.isEntry) return;
      need.push(file);
      for (const dep of bundle[file]?.imports ?? []) visit(dep);
    };
    visit(chunk.fileName);
    out[m[1].toLowerCase()] = need;
  }
  return out;
}

export function screenChunks(): Plugin {
  return {
    name: 'synoptic-screen-chunks',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        if (!ctx.bundle) return;
        const map = widgetChunks(ctx.bundle as unknown as Record<string, ChunkLike>);
        // `<` escaped so no file name can end the data block early
        const json = JSON.stringify(map).replace(/</g, '\\u003c');
        return [
          {
            tag: 'script',
            attrs: { type: 'application/json', id: 'synoptic-chunks' },
            children: json,
            injectTo: 'head-prepend',
          },
        ];
      },
    },
  };
}
