/**
 * `npm run docs:cli`: rewrites the option reference of docs/cli.md from the CLI's option table.
 * `npm run docs:cli -- --check` only says whether it is current (exit 1 if not).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withCurrentReference } from '../src/ops/cli/option-reference.js';

const path = new URL('../docs/cli.md', import.meta.url);
const current = readFileSync(path, 'utf8');
const wanted = withCurrentReference(current);
if (process.argv.includes('--check')) {
  if (current !== wanted) {
    process.stderr.write('docs/cli.md: the option reference is out of date; run npm run docs:cli\n');
    process.exitCode = 1;
  }
} else if (current !== wanted) {
  writeFileSync(path, wanted);
  process.stdout.write('docs/cli.md: option reference rewritten\n');
} else {
  process.stdout.write('docs/cli.md: option reference already current\n');
}
