import { describe, expect, it } from 'vitest';
import { MarkBatcher, type PublishedMark } from '../../src/core/mark-batcher.js';

describe('MarkBatcher', () => {
  it('coalesces marks that arrive while a write is in flight, and answers each caller for its own ids', async () => {
    const writes: PublishedMark[][] = [];
    let release: (() => void) | undefined;
    const batcher = new MarkBatcher(async (marks) => {
      writes.push([...marks]);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return new Set(marks.filter((m) => m.token !== 'stale').map((m) => m.id));
    });
    const first = batcher.mark('t1', ['a']);
    await new Promise((resolve) => setImmediate(resolve));
    const queued = [batcher.mark('t2', ['b', 'c']), batcher.mark('stale', ['d']), batcher.mark('t3', ['e'])];
    release?.();
    expect(await first).toBe(1);
    expect(await Promise.all(queued)).toEqual([2, 0, 1]);
    expect(writes.map((w) => w.map((m) => m.id))).toEqual([['a'], ['b', 'c', 'd', 'e']]);
  });

  it('fails every caller of a failed write, and keeps working afterwards', async () => {
    let fail = true;
    const batcher = new MarkBatcher(async (marks) => {
      if (fail) throw new Error('database down');
      return new Set(marks.map((m) => m.id));
    });
    await expect(Promise.all([batcher.mark('t', ['a']), batcher.mark('t', ['b'])])).rejects.toThrow('database down');
    fail = false;
    expect(await batcher.mark('t', ['c'])).toBe(1);
    expect(await batcher.mark('t', [])).toBe(0);
  });
});
