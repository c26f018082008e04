import { describe, expect, it } from 'vitest';
import { limitClasses } from '../../src/stores/postgres/reader/postgres-partition-reader.js';
import { statementLimit } from '../../src/stores/postgres/reader/read-partitions.js';

describe('limitClasses (the PostgreSQL read gives each class of limit its own branch)', () => {
  it('keeps up to three distinct limits, each as its statement writes it', () => {
    expect(limitClasses([23, 16, 23, 1, 16])).toEqual({ classes: [2, 1, 2, 0, 1], limits: [1, 16, 22] });
    expect(limitClasses([500])).toEqual({ classes: [0], limits: [480, 1, 1] });
    expect(limitClasses([8, 3])).toEqual({ classes: [1, 0], limits: [3, 8, 1] });
  });

  it('with more, rounds each limit down to the largest class not above it: never more rows than asked', () => {
    const requested = [1, 5, 9, 16, 40];
    const { classes, limits } = limitClasses(requested);
    expect(limits).toEqual([1, 9, 40]);
    expect(classes.map((c) => limits[c])).toEqual([1, 1, 9, 9, 40]);
    requested.forEach((limit, i) => expect(limits[classes[i] as number]).toBeLessThanOrEqual(limit));
  });
});

describe('statementLimit (the few limits the read statements are written with)', () => {
  it('keeps limits up to 16 and rounds larger ones down to eight steps per doubling', () => {
    expect([1, 2, 15, 16, 17, 23, 31, 32, 33, 100, 500, 1000].map(statementLimit)).toEqual([1, 2, 15, 16, 16, 22, 30, 32, 32, 96, 480, 960]);
  });

  it('never gives more rows than asked and less than 12.5 % fewer, with at most 8 values per doubling', () => {
    const seen = new Set<number>();
    for (let n = 1; n <= 4096; n++) {
      const limit = statementLimit(n);
      expect(limit).toBeLessThanOrEqual(n);
      expect(n - limit).toBeLessThan(n / 8);
      seen.add(limit);
    }
    expect(seen.size).toBeLessThanOrEqual(16 + 8 * 8);
  });
});
