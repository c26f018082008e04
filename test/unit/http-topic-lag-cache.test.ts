import { describe, expect, it } from 'vitest';
import type { TopicLag } from '../../src/core/ports/outbox-operator.js';
import { TopicLagCache } from '../../src/ops/http/topic-lag-cache.js';

/** A lag read the test settles by hand, counting the reads it was asked for. */
function controlledRead() {
  const reads: { limit: number; resolve: (lag: TopicLag[]) => void; reject: (error: Error) => void }[] = [];
  const read = (limit: number) => new Promise<TopicLag[]>((resolve, reject) => reads.push({ limit, resolve, reject }));
  return { reads, read };
}

const lag = (topic: string): TopicLag[] => [{ topic, destination: null, pending: 3, oldestPendingAgeSeconds: 1.5 }];

describe('TopicLagCache', () => {
  it('shares one read between the requests that arrive while it runs', async () => {
    const { reads, read } = controlledRead();
    const cache = new TopicLagCache(read, 5000, () => 1000);
    const first = cache.get(50);
    const second = cache.get(50);
    expect(reads).toHaveLength(1);
    reads[0]?.resolve(lag('a'));
    expect(await first).toBe(await second);
    expect((await first).topics).toEqual(lag('a'));
  });

  it('serves a finished read for its time, with when it finished, then reads again', async () => {
    const { reads, read } = controlledRead();
    let now = 10_000;
    const cache = new TopicLagCache(read, 5000, () => now);
    const first = cache.get(50);
    now = 10_400; // the read took 0.4 s: it is kept from when it finished
    reads[0]?.resolve(lag('a'));
    expect((await first).at).toEqual(new Date(10_400));
    now = 15_399;
    expect((await cache.get(50)).topics).toEqual(lag('a'));
    expect(reads).toHaveLength(1);
    now = 15_400;
    const fresh = cache.get(50);
    expect(reads).toHaveLength(2);
    reads[1]?.resolve(lag('b'));
    expect(await fresh).toEqual({ at: new Date(15_400), topics: lag('b') });
  });

  it('keeps one reading per limit', async () => {
    const { reads, read } = controlledRead();
    const cache = new TopicLagCache(read, 5000, () => 0);
    void cache.get(50);
    void cache.get(1);
    expect(reads.map((r) => r.limit)).toEqual([50, 1]);
  });

  it('does not keep a failed read: the next request reads again', async () => {
    const { reads, read } = controlledRead();
    const cache = new TopicLagCache(read, 5000, () => 0);
    const failing = cache.get(50);
    reads[0]?.reject(new Error('connection terminated'));
    await expect(failing).rejects.toThrow('connection terminated');
    void cache.get(50);
    expect(reads).toHaveLength(2);
  });
});
