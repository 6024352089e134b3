/**
 * Build plugin: next to every text file of the build (js, css, html, svg, json)
 * it writes `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9), so
 * the gateway serves them as a web server would (`Content-Encoding`, `Vary`)
 * without compressing anything per request. Node's own zlib: nothing to install.
 * A compressed copy that is not smaller than its file is not written.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Plugin, ResolvedConfig } from 'vite';

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/;

/** Every file under `dir` (recursively). */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** Write `file.br` and `file.gz` beside each compressible file of `dir`; returns their sizes. */
export function precompressDir(dir: string): { file: string; raw: number; br?: number; gz?: number }[] {
  return files(dir)
    .filter((f) => COMPRESSIBLE.test(f))
    .map((file) => {
      const raw = readFileSync(file);
      const br = brotliCompressSync(raw, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        },
      });
      const gz = gzipSync(raw, { level: 9 });
      const out: { file: string; raw: number; br?: number; gz?: number } = { file, raw: raw.length };
      if (br.length < raw.length) writeFileSync(`${file}.br`, br), (out.br = br.length);
      if (gz.length < raw.length) writeFileSync(`${file}.gz`, gz), (out.gz = gz.length);
      return out;
    });
}

export function precompress(): Plugin {
  let config: ResolvedConfig;
  return {
    name: 'synoptic-precompress',
    apply: 'build',
    configResolved(c) {
      config = c;
    },
    closeBundle() {
      const dir = resolve(config.root, config.build.outDir);
      const sizes = precompressDir(dir);
      const sum = (k: 'raw' | 'br' | 'gz') => sizes.reduce((n, s) => n + (s[k] ?? s.raw), 0);
      config.logger.info(
        `precompressed ${sizes.length} files: ${(sum('raw') / 1024).toFixed(1)} kB → ` +
          `br ${(sum('br') / 1024).toFixed(1)} kB, gzip ${(sum('gz') / 1024).toFixed(1)} kB`,
      );
    },
  };
}
