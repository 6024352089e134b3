import { unzipSync, strFromU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { importSite, zipFolder } from './upload';

function inFolder(path: string, text: string): File {
  const f = new File([text], path.split('/').pop()!);
  Object.defineProperty(f, 'webkitRelativePath', { value: path });
  return f;
}

describe('a folder zipped for upload', () => {
  it('keeps only what an import reads, under the folder name', async () => {
    const { name, zip, count } = await zipFolder([
      inFolder('ADCore/ADTop.bob', '<display/>'),
      inFolder('ADCore/sub/x.OPI', '<display/>'),
      inFolder('ADCore/pic/a.png', 'png'),
      inFolder('ADCore/README.md', '#'),
      inFolder('ADCore/.git/config.bob', 'x'),
    ]);
    expect(name).toBe('ADCore');
    expect(count).toBe(3);
    const members = unzipSync(zip);
    expect(Object.keys(members).sort()).toEqual(['ADCore/ADTop.bob', 'ADCore/pic/a.png', 'ADCore/sub/x.OPI']);
    expect(strFromU8(members['ADCore/ADTop.bob'])).toBe('<display/>');
  });

  it('refuses a folder without displays', async () => {
    await expect(zipFolder([inFolder('docs/a.txt', 'x')])).rejects.toThrow('no .bob, .opi or .wj display');
  });
});

describe('the upload', () => {
  it('sends the options and gives the gateway reason of a refusal', async () => {
    const seen: string[] = [];
    const fetcher = (async (url: string, init: RequestInit) => {
      seen.push(url, new Headers(init.headers).get('Authorization') ?? '');
      return new Response(JSON.stringify({ error: 'unreadable', reason: "refused: '../x.bob' leaves the set (..)" }), { status: 422 });
    }) as unknown as typeof fetch;
    await expect(importSite(new Uint8Array([1]), 'up', { set: 'ring', overwrite: true, dryRun: true }, 'tok', fetcher)).rejects.toThrow('leaves the set');
    expect(seen).toEqual(['api/sites/import?file=up&set=ring&overwrite=1&dry_run=1', 'Bearer tok']);
  });
});
