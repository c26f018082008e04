import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** The README's first command: `npm start` must keep working with no server at all. */
describe('the embedded demo (npm start)', () => {
  it('shows a rollback, a retried publish, a skipped duplicate and every committed event delivered', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      timeout: 60_000,
      env: { ...process.env, OUTBOXER_DATABASE_URL: '', OUTBOXER_PUBLISHER: '' },
    });
    expect(stdout).toContain('order 2 rolled back');
    expect(stdout).toMatch(/publish of \S+ failed .*retry in \d+ ms/);
    expect(stdout).toMatch(/\(attempt 2\)/);
    expect(stdout).toContain('skipped a duplicate delivery');
    expect(stdout).toContain('shipping applied 4 orders once each');
    expect(stdout).toContain('4 committed, 4 published, 1 rolled back');
  });
});
