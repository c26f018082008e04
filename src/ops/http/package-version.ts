import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The package's version, read once when first asked: package.json sits three levels up from src/ops/http and dist/ops/http. */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  try {
    const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown }).version;
    cached = typeof version === 'string' ? version : 'unknown';
  } catch {
    cached = 'unknown';
  }
  return cached;
}
