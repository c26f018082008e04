import { describe, expect, it } from 'vitest';
import { isUuid, newMessageId } from '../../src/core/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newMessageId', () => {
  it('makes UUIDv7 ids (version 7, RFC 9562 variant)', () => {
    for (let i = 0; i < 100; i++) expect(newMessageId()).toMatch(V7);
  });

  it('makes ids that strictly increase, within one millisecond too, and never repeat', () => {
    const ids = Array.from({ length: 10_000 }, () => newMessageId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
  });

  it('carries the current Unix time in milliseconds in its first 48 bits', () => {
    const before = Date.now();
    const id = newMessageId();
    const after = Date.now();
    const millis = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(after + 1);
  });
});

describe('isUuid', () => {
  it.each([
    '018f3c1e-7b2a-7cde-8f01-23456789abcd',
    '018F3C1E-7B2A-7CDE-8F01-23456789ABCD',
    '00000000-0000-0000-0000-000000000000',
    'f47ac10b-58cc-4372-a567-0e02b2c3d479',
  ])('accepts %s', (value) => {
    expect(isUuid(value)).toBe(true);
  });

  it.each([
    '',
    'not-a-uuid',
    '018f3c1e7b2a7cde8f0123456789abcd',
    '{018f3c1e-7b2a-7cde-8f01-23456789abcd}',
    '018f3c1e-7b2a-7cde-8f01-23456789abcd\n',
    ' 018f3c1e-7b2a-7cde-8f01-23456789abcd',
    '018f3c1e-7b2a-7cde-8f01-23456789abcg',
    "018f3c1e-7b2a-7cde-8f01-23456789abc'",
  ])('refuses %j', (value) => {
    expect(isUuid(value)).toBe(false);
  });
});
