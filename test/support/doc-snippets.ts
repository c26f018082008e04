import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** A fenced TypeScript block of a markdown file. */
export interface DocBlock {
  readonly doc: string;
  readonly line: number;
  readonly text: string;
}

/** A `// #region <doc>, <doc>` … `// #endregion` part of an example file: the code those docs show. */
export interface ExampleRegion {
  readonly file: string;
  readonly line: number;
  readonly docs: readonly string[];
  readonly text: string;
}

async function filesUnder(root: string, directory: string, extension: string): Promise<string[]> {
  const entries = await readdir(join(root, directory), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

export async function docBlocks(root: string): Promise<DocBlock[]> {
  const blocks: DocBlock[] = [];
  for (const doc of ['README.md', ...(await filesUnder(root, 'docs', '.md'))]) {
    const lines = (await readFile(join(root, doc), 'utf8')).split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? '')) continue;
      const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
      blocks.push({ doc, line: i + 1, text: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return blocks;
}

export async function exampleRegions(root: string): Promise<ExampleRegion[]> {
  const regions: ExampleRegion[] = [];
  for (const file of await filesUnder(root, 'examples', '.ts')) {
    const lines = (await readFile(join(root, file), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      const docs = /^\/\/ #region (.+)$/.exec(line)?.[1];
      if (docs === undefined) return;
      const end = lines.findIndex((other, j) => j > i && other === '// #endregion');
      if (end < 0) throw new Error(`${file}:${i + 1}: #region without #endregion`);
      regions.push({ file, line: i + 1, docs: docs.split(',').map((doc) => doc.trim()), text: lines.slice(i + 1, end).join('\n') });
    });
  }
  return regions;
}
