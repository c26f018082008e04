import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_BUNDLE_MODULE, dashboardBundleModule, dashboardScript } from '../../scripts/dashboard-bundle.js';
import { DASHBOARD_ASSETS } from '../../src/ops/http/dashboard-assets.js';

describe('the dashboard script bundle', () => {
  it('is the committed one: the client modules bundled again give the same module (npm run build:dashboard)', async () => {
    const script = await dashboardScript();
    expect(readFileSync(DASHBOARD_BUNDLE_MODULE, 'utf8')).toBe(dashboardBundleModule(script));
    expect(DASHBOARD_ASSETS.get('/dashboard.js')?.body).toBe(script);
  });

  it('carries any script text through its template literal unchanged', () => {
    const script = "const a = `x ${1} \\` \\\\n`; const b = '$' + '{';\n";
    const module = dashboardBundleModule(script);
    const literal = module.slice(module.indexOf('= `') + 2, module.lastIndexOf(';'));
    expect(runInNewContext(literal)).toBe(script);
  });
});
