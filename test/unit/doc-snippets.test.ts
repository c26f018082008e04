import { describe, expect, it } from 'vitest';
import { docBlocks, exampleRegions } from '../support/doc-snippets.js';

const root = new URL('../..', import.meta.url).pathname;

/**
 * Every TypeScript block a user copies from README.md or docs/ is a region of a file under examples/,
 * which `npm run typecheck` compiles and test/integration/examples.test.ts runs against the real services.
 */
describe('code blocks in the docs', () => {
  it('each ts block is, character for character, a region of an example file that names its doc', async () => {
    const regions = await exampleRegions(root);
    const blocks = await docBlocks(root);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    const unbacked = blocks
      .filter((block) => !regions.some((region) => region.text === block.text && region.docs.includes(block.doc)))
      .map((block) => `${block.doc}:${block.line} is not a "// #region ${block.doc}" of any file under examples/ (edit the example, then paste it)`);
    expect(unbacked).toEqual([]);
  });

  it('each example region appears in every doc it names', async () => {
    const blocks = await docBlocks(root);
    const regions = await exampleRegions(root);
    expect(regions.length).toBeGreaterThanOrEqual(5);
    const missing = regions.flatMap((region) =>
      region.docs
        .filter((doc) => !blocks.some((block) => block.doc === doc && block.text === region.text))
        .map((doc) => `${region.file}:${region.line} is not shown in ${doc} (paste it there, or drop the doc from the #region line)`),
    );
    expect(missing).toEqual([]);
  });
});
