import { describe, expect, it } from 'vitest';
import { auditDeliveries } from '../../bench/measure/first-deliveries.js';

describe('auditDeliveries', () => {
  it('passes every message delivered once, keys interleaved, in order', () => {
    const deliveries = [
      { key: 'a', n: 0 },
      { key: 'b', n: 1 },
      { key: 'a', n: 2 },
      { key: 'b', n: 3 },
    ];
    expect(auditDeliveries(deliveries, 4)).toEqual({ missing: 0, duplicates: 0, keyOrderViolations: 0 });
  });

  it('counts a redelivery as a duplicate, not as a key order violation', () => {
    const deliveries = [
      { key: 'a', n: 0 },
      { key: 'a', n: 2 },
      { key: 'a', n: 0 },
      { key: 'a', n: 2 },
      { key: 'a', n: 4 },
    ];
    expect(auditDeliveries(deliveries, 5)).toEqual({ missing: 2, duplicates: 2, keyOrderViolations: 0 });
  });

  it('counts a first delivery that overtook an earlier message of its key, and one never delivered', () => {
    const deliveries = [
      { key: 'a', n: 2 },
      { key: 'b', n: 1 },
      { key: 'a', n: 0 },
    ];
    expect(auditDeliveries(deliveries, 4)).toEqual({ missing: 1, duplicates: 0, keyOrderViolations: 1 });
  });
});
