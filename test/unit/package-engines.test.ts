import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

type Version = readonly [number, number, number];

const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text
    .replace(/^v/, '')
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The node-semver range forms that `engines.node` fields use (`>=20`, `>= 22.x`, `^20.19.0 || >=22.12.0`, `8.* || >= 10.*`). */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => {
        const [, operator = '', rest = ''] = /^([<>=^~]*)(.*)$/.exec(comparator) ?? [];
        const bound = parse(rest);
        const order = compare(version, bound);
        switch (operator) {
          case '>=':
            return order >= 0;
          case '>':
            return order > 0;
          case '<':
            return order < 0;
          case '<=':
            return order <= 0;
          case '^':
            return order >= 0 && (bound[0] > 0 ? version[0] === bound[0] : version[1] === bound[1]);
          case '':
            // an x-range (`8.*`, `20.x`, `20`): the parts it names must match
            return rest.split('.').every((part, i) => !/^\d+$/.test(part) || version[i] === Number(part));
          default:
            throw new Error(`unsupported engines range ${JSON.stringify(range)}`);
        }
      }),
  );
}

interface LockEntry {
  readonly engines?: { readonly node?: string };
  readonly dev?: boolean;
}

const root = new URL('../../', import.meta.url);
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, LockEntry> };
const declared = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } }).engines.node;
/** Installed here: optional packages for other platforms are in the lock file but not on disk. */
const installed = Object.entries(lock.packages).filter(([path]) => path !== '' && existsSync(new URL(path, root)));

describe('Node versions: what package.json declares, and what npm ci installs', () => {
  it('reads the range forms it meets', () => {
    expect(satisfies([20, 20, 2], '>= 22.x')).toBe(false);
    expect(satisfies([22, 0, 0], '>= 22.x')).toBe(true);
    expect(satisfies([20, 20, 2], '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies([20, 18, 0], '^20.19.0 || >=22.12.0')).toBe(false);
  });

  it('every installed package accepts the Node running the tests, so npm ci warns no EBADENGINE', () => {
    const running = parse(process.version);
    const refusing = installed.filter(([, entry]) => entry.engines?.node !== undefined && !satisfies(running, entry.engines.node));
    expect(refusing.map(([path, entry]) => `${path} wants node ${entry.engines?.node}`)).toEqual([]);
  });

  it('the runtime dependencies accept the oldest Node that package.json promises', () => {
    const oldest = parse(/\d+(\.\d+)*/.exec(declared)?.[0] ?? '');
    const runtime = installed.filter(([, entry]) => entry.dev !== true);
    expect(runtime.length).toBeGreaterThan(0);
    const refusing = runtime.filter(([, entry]) => entry.engines?.node !== undefined && !satisfies(oldest, entry.engines.node));
    expect(refusing.map(([path, entry]) => `${path} wants node ${entry.engines?.node}`)).toEqual([]);
  });
});
