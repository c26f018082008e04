import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_ASSETS } from '../../src/ops/http/dashboard-assets.js';

function asset(path: string): string {
  const found = DASHBOARD_ASSETS.get(path);
  if (found === undefined) throw new Error(`no dashboard asset ${path}`);
  return found.body;
}

/** What the page may not do under its CSP and its promises (no data as markup, no token kept anywhere). */
describe('the dashboard assets', () => {
  it('are one page, one script and one stylesheet, with their content types, small enough for a fast first paint', () => {
    expect([...DASHBOARD_ASSETS.keys()]).toEqual(['/', '/dashboard.js', '/dashboard.css']);
    expect([...DASHBOARD_ASSETS.values()].map((a) => a.contentType)).toEqual([
      'text/html; charset=utf-8',
      'text/javascript; charset=utf-8',
      'text/css; charset=utf-8',
    ]);
    const bytes = [...DASHBOARD_ASSETS.values()].reduce((sum, a) => sum + Buffer.byteLength(a.body), 0);
    expect(bytes).toBeLessThan(64 * 1024);
  });

  it('have no inline script, style or event handler, and load nothing from another origin', () => {
    const html = asset('/');
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script src="/dashboard.js" defer>']);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:/i);
    expect(html.match(/<link\b[^>]*>/g)?.map((link) => /href="([^"]*)"/.exec(link)?.[1]?.slice(0, 20))).toEqual(['data:image/svg+xml,%', '/dashboard.css']);
    for (const body of [html, asset('/dashboard.js'), asset('/dashboard.css')]) {
      // the SVG namespace (of the icon and the sparkline) is a name, not a request
      expect((body.match(/https?:\/\/[^\s'"]+/g) ?? []).filter((url) => url !== 'http://www.w3.org/2000/svg')).toEqual([]);
      expect(body).not.toMatch(/@import|url\(/);
    }
  });

  it('has a script that parses, writes data as text only, and keeps the token in memory only', () => {
    const script = asset('/dashboard.js');
    expect(() => new Script(script, { filename: 'dashboard.js' })).not.toThrow();
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\('style'|\.style\./);
    expect(script).not.toMatch(/localStorage|sessionStorage|document\.cookie|indexedDB/);
    expect(script).toContain("credentials: 'omit'");
  });

  it('refers only to elements the page has', () => {
    const html = asset('/');
    const ids = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]));
    const used = [...new Set([...asset('/dashboard.js').matchAll(/\b(?:el|setText|show|showError|fact)\('([a-z-]+)'/g)].map((match) => match[1]))];
    expect(used.length).toBeGreaterThan(30);
    expect(used.filter((id) => !ids.has(id))).toEqual([]);
    for (const match of html.matchAll(/<label for="([^"]+)"/g)) expect(ids.has(match[1]), `label for ${match[1]}`).toBe(true);
  });
});
