import { describe, expect, it } from 'vitest';
import { limitClasses } from '../../src/stores/postgres/reader/postgres-partition-reader.js';

describe('limitClasses (the PostgreSQL read gives each class of limit its own branch)', () => {
  it('keeps up to three distinct limits exactly', () => {
    expect(limitClasses([23, 16, 23, 1, 16])).toEqual({ classes: [2, 1, 2, 0, 1], limits: [1, 16, 23] });
    expect(limitClasses([500])).toEqual({ classes: [0], limits: [500, 1, 1] });
  });

  it('with more, rounds each limit down to the largest class not above it: never more rows than asked', () => {
    const requested = [1, 5, 9, 16, 40];
    const { classes, limits } = limitClasses(requested);
    expect(limits).toEqual([1, 9, 40]);
    expect(classes.map((c) => limits[c])).toEqual([1, 1, 9, 9, 40]);
    requested.forEach((limit, i) => expect(limits[classes[i] as number]).toBeLessThanOrEqual(limit));
  });
});
