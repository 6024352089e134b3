import { mkdtempSync, readFileSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { precompressDir } from './precompress';
import { widgetChunks } from './screen-chunks';

describe('precompressDir', () => {
  it('writes .br and .gz copies that decode to the file, only where smaller', () => {
    const dir = mkdtempSync(join(tmpdir(), 'precompress-'));
    mkdirSync(join(dir, 'assets'));
    const js = 'export const a = "' + 'abc'.repeat(2000) + '";\n';
    writeFileSync(join(dir, 'assets', 'a.js'), js);
    writeFileSync(join(dir, 'tiny.svg'), '<svg/>');
    writeFileSync(join(dir, 'image.png'), 'not text');
    const sizes = precompressDir(dir);
    expect(sizes.map((s) => s.file).sort()).toEqual([join(dir, 'assets', 'a.js'), join(dir, 'tiny.svg')]);
    expect(brotliDecompressSync(readFileSync(join(dir, 'assets', 'a.js.br'))).toString()).toBe(js);
    expect(gunzipSync(readFileSync(join(dir, 'assets', 'a.js.gz'))).toString()).toBe(js);
    expect(existsSync(join(dir, 'tiny.svg.gz'))).toBe(false); // gzip's header makes it bigger
    expect(existsSync(join(dir, 'image.png.br'))).toBe(false);
  });
});

describe('widgetChunks', () => {
  it('lists each lazy widget chunk with what it imports, not the entry', () => {
    const chunk = (fileName: string, o: object) => ({ type: 'chunk' as const, fileName, ...o });
    const bundle = {
      'assets/index.js': chunk('assets/index.js', { isEntry: true, facadeModuleId: '/x/src/main.ts', imports: [] }),
      'assets/Gauge.js': chunk('assets/Gauge.js', { isDynamicEntry: true, facadeModuleId: '/x/src/lib/widgets/Gauge.svelte', imports: ['assets/echarts.js', 'assets/index.js'] }),
      'assets/Xy.js': chunk('assets/Xy.js', { isDynamicEntry: true, facadeModuleId: '/x/src/lib/widgets/Xy.svelte', imports: ['assets/echarts.js', 'assets/arrays.js'] }),
      'assets/echarts.js': chunk('assets/echarts.js', { imports: ['assets/tslib.js'] }),
      'assets/tslib.js': chunk('assets/tslib.js', { imports: [] }),
      'assets/arrays.js': chunk('assets/arrays.js', { imports: [] }),
      'assets/other.js': chunk('assets/other.js', { isDynamicEntry: true, facadeModuleId: '/x/src/routes/Help.svelte' }),
      'assets/index.css': { type: 'asset' as const, fileName: 'assets/index.css' },
    };
    expect(widgetChunks(bundle)).toEqual({
      gauge: ['assets/Gauge.js', 'assets/echarts.js', 'assets/tslib.js'],
      xy: ['assets/Xy.js', 'assets/echarts.js', 'assets/tslib.js', 'assets/arrays.js'],
    });
  });
});
