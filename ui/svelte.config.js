import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess(),
  compilerOptions: {
    // Widgets read their props once at creation on purpose: a widget is re-created
    // (keyed) when its spec or channels change, never updated in place.
    warningFilter: (w) => w.code !== 'state_referenced_locally',
  },
};
