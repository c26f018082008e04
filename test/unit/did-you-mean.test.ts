import { describe, expect, it } from 'vitest';
import { closestMatch, didYouMean, editDistance } from '../../src/ops/cli/did-you-mean.js';

describe('did you mean: the nearest known word, when it is near enough', () => {
  const flags = ['lease-ms', 'publish-timeout-ms', 'batch-size', 'broker-url', 'broker', 'json', 'limit', 'all'];

  it('counts a letter missing, extra, wrong, or two swapped as one edit', () => {
    expect([
      editDistance('lease-ms', 'lease-ms'),
      editDistance('lease-mss', 'lease-ms'),
      editDistance('lese-ms', 'lease-ms'),
      editDistance('stauts', 'status'),
    ]).toEqual([0, 1, 1, 1]);
    expect(editDistance('kafka', 'nats')).toBeGreaterThan(2);
  });

  it.each([
    ['lease-mss', 'lease-ms'],
    ['Lease-MS', 'lease-ms'],
    ['brokr', 'broker'],
    ['broker-uri', 'broker-url'],
    ['publish-timeout', 'publish-timeout-ms'],
    ['batch', 'batch-size'],
    ['jsno', 'json'],
  ])('%s -> %s', (typed, meant) => {
    expect(closestMatch(typed, flags)).toBe(meant);
  });

  it.each(['frobnicate', 'x', 'ms', 'bro', 'kafka'])('nothing for %s: too far, too short, or more than one word starts so', (typed) => {
    expect(closestMatch(typed, flags)).toBeUndefined();
  });

  it('words the suggestion, or says nothing', () => {
    expect(didYouMean('lease-mss', flags, (flag) => `--${flag}`)).toBe('; did you mean --lease-ms?');
    expect(didYouMean('frobnicate', flags)).toBe('');
  });
});
