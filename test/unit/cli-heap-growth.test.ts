import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/ops/cli/heap-growth.js';

describe('heapGrowthFlag: the outboxer executable keeps its old generation at twice its live heap unless the operator chose', () => {
  it('sets --heap-growing-percent when neither node flags nor NODE_OPTIONS name it', () => {
    expect(HEAP_GROWING_PERCENT).toBe(100);
    expect(heapGrowthFlag([], undefined)).toBe('--heap-growing-percent=100');
    expect(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=512')).toBe('--heap-growing-percent=100');
  });

  it("leaves the operator's own setting alone, in either spelling, from the command line or NODE_OPTIONS", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=30'], undefined)).toBeUndefined();
    expect(heapGrowthFlag(['--heap_growing_percent=30'], undefined)).toBeUndefined();
    expect(heapGrowthFlag([], '--max-old-space-size=512 --heap-growing-percent=300')).toBeUndefined();
  });
});
