import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function filesUnder(directory: string, extension: RegExp): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && extension.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    for (const [, id = ''] of line.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id);
    const heading = fenced ? undefined : /^#{1,6}\s+(.+?)\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[`*_]/g, (mark) => (mark === '_' ? '_' : ''))
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function headingsOf(file: string): string[] {
  let fenced = false;
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (line.startsWith('```')) fenced = !fenced;
      return fenced ? [] : (/^#{1,6}\s+(.+?)\s*$/.exec(line)?.[1] ?? []);
    });
}

const markdown = ['README.md', 'BENCHMARKS.md', ...filesUnder('docs', /\.md$/)];

describe('documentation links', () => {
  it.each(markdown)('every relative link of %s names a file that exists, and a heading of it', (doc) => {
    const broken: string[] = [];
    let fenced = false;
    readFileSync(join(ROOT, doc), 'utf8')
      .split('\n')
      .forEach((line, index) => {
        if (line.startsWith('```')) fenced = !fenced;
        if (fenced) return;
        for (const [, target = ''] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          const [path = '', anchor] = target.split('#');
          const file = path === '' ? doc : relative(ROOT, join(ROOT, dirname(doc), path));
          const where = `${doc}:${index + 1} -> ${target}`;
          if (!existsSync(join(ROOT, file))) broken.push(`${where}: no such file`);
          else if (anchor !== undefined && (!file.endsWith('.md') || !anchorsOf(file).has(anchor))) broken.push(`${where}: no such heading`);
        }
      });
    expect(broken).toEqual([]);
  });

  it('every `docs/<page>.md, "<section>"` the code cites names a page and a heading that exist', () => {
    const sources = ['src', 'test', 'scripts', 'chaos', 'bench'].filter((dir) => existsSync(join(ROOT, dir)) && statSync(join(ROOT, dir)).isDirectory());
    const citations = sources.flatMap((dir) => filesUnder(dir, /\.(ts|cjs|sql)$/)).concat('.dependency-cruiser.cjs');
    const broken: string[] = [];
    let cited = 0;
    for (const file of citations) {
      // a citation may wrap onto the next comment line
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/\n\s*(\*|\/\/|--)\s*/g, ' ');
      for (const [, page = '', section] of text.matchAll(/docs\/([\w/.-]+?\.md)(?:, "([^"]+)")?/g)) {
        cited++;
        const doc = `docs/${page}`;
        if (!existsSync(join(ROOT, doc))) broken.push(`${file}: ${doc} does not exist`);
        else if (section !== undefined && !headingsOf(doc).some((heading) => heading.startsWith(section)))
          broken.push(`${file}: ${doc} has no heading "${section}"`);
      }
    }
    expect(cited).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
