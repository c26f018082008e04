/**
 * `npm run build:dashboard`: bundles the dashboard's client modules (src/ops/http/dashboard/client) into
 * src/ops/http/dashboard/dashboard-script.generated.ts. `npm run build:dashboard -- --check` only says whether it
 * is current (exit 1 if not).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DASHBOARD_BUNDLE_MODULE, dashboardBundleModule, dashboardScript } from './dashboard-bundle.js';

const name = 'src/ops/http/dashboard/dashboard-script.generated.ts';
const current = readFileSync(DASHBOARD_BUNDLE_MODULE, 'utf8');
const wanted = dashboardBundleModule(await dashboardScript());
if (process.argv.includes('--check')) {
  if (current !== wanted) {
    process.stderr.write(`${name}: out of date; run npm run build:dashboard\n`);
    process.exitCode = 1;
  }
} else if (current !== wanted) {
  writeFileSync(DASHBOARD_BUNDLE_MODULE, wanted);
  process.stdout.write(`${name}: rebuilt\n`);
} else {
  process.stdout.write(`${name}: already current\n`);
}
