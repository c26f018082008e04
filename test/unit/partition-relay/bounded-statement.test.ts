import { describe, expect, it } from 'vitest';
import { OutboxerError } from '../../../src/core/errors.js';
import { bounded } from '../../../src/core/partition-relay/bounded-statement.js';

describe('bounded', () => {
  it('passes an answer that comes in time, and its error', async () => {
    await expect(bounded(Promise.resolve(7), 1000, 'heartbeat')).resolves.toBe(7);
    await expect(bounded(Promise.reject(new Error('refused')), 1000, 'heartbeat')).rejects.toThrow('refused');
  });

  it('gives up on a statement that never answers, with a coded error naming the statement', async () => {
    const error = await bounded(new Promise(() => undefined), 5, 'heartbeat of relay r1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxerError);
    expect((error as OutboxerError).code).toBe('OUTBOXER_DATABASE_UNAVAILABLE');
    expect((error as Error).message).toContain('heartbeat of relay r1');
  });

  it('does not leave a late failure unhandled', async () => {
    let fail!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (fail = reject));
    await expect(bounded(late, 1, 'acquire')).rejects.toThrow(/acquire/);
    fail(new Error('late'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
