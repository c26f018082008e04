import { afterEach, describe, expect, it, vi } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import { FakePublisher, ids, msg, permanent, retry, run, tick, transient } from './publish-claim-fixtures.js';

describe('publishClaim: order and concurrency', () => {
  it('never has two messages of one key in flight and publishes each key in order', async () => {
    const messages = Array.from({ length: 60 }, (_, i) => msg(i % 10 === 9 ? null : `k${i % 3}`));
    const publisher = new FakePublisher();
    const outcome = await run(messages, publisher, { maxInFlight: 8 });
    expect(publisher.keyOverlap).toBe(false);
    for (const key of ['k0', 'k1', 'k2']) {
      expect(ids(publisher.started.filter((m) => m.key === key))).toEqual(ids(messages.filter((m) => m.key === key)));
    }
    expect(new Set(ids(outcome.published))).toEqual(new Set(ids(messages)));
    expect(outcome.failed).toEqual([]);
    expect(outcome.released).toEqual([]);
  });

  it.each([
    ['distinct keys', 4, Array.from({ length: 30 }, (_, i) => `k${i % 10}`), 4],
    ['unkeyed messages', 3, Array.from({ length: 12 }, () => null), 3],
    ['fewer keys than maxInFlight', 100, ['a', 'b', 'a', 'c', 'b', 'd', 'e'], 5],
    ['a single key', 50, ['a', 'a', 'a', 'a'], 1],
  ])('runs %s in parallel up to maxInFlight', async (_label, maxInFlight, keys, expected) => {
    const publisher = new FakePublisher(async () => {
      for (let i = 0; i < 3; i++) await tick();
    });
    const outcome = await run(
      keys.map((key) => msg(key)),
      publisher,
      { maxInFlight },
    );
    expect(publisher.maxInFlight).toBe(expected);
    expect(outcome.published).toHaveLength(keys.length);
  });

  it('lets other keys flow while one key waits on a slow publish', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = msg('slow');
    const publisher = new FakePublisher(async (m) => (m.id === slow.id ? gate : tick()));
    const others = Array.from({ length: 6 }, (_, i) => msg(`fast${i % 2}`));
    const pending = run([slow, msg('slow'), ...others], publisher, { maxInFlight: 2 });
    const fastStarted = () => publisher.started.filter((m) => m.key !== 'slow').length;
    for (let i = 0; i < 200 && fastStarted() < others.length; i++) await tick();
    expect(fastStarted()).toBe(others.length); // all started while the slow key still waits
    expect(publisher.started.filter((m) => m.key === 'slow')).toHaveLength(1);
    release();
    const outcome = await pending;
    expect(outcome.published).toHaveLength(8);
  });
});

describe('publishClaim: failures', () => {
  it('stops a key at a retryable failure, releases the rest of it, and schedules a backoff in the jitter band', async () => {
    const a1 = msg('a'),
      a2 = msg('a'),
      a3 = msg('a'),
      b1 = msg('b'),
      b2 = msg('b');
    const publisher = new FakePublisher((m) => {
      if (m.id === a1.id) throw transient(m);
      return tick();
    });
    const outcome = await run([a1, a2, b1, a3, b2], publisher);
    expect(ids(publisher.started.filter((m) => m.key === 'a'))).toEqual([a1.id]);
    expect(ids(outcome.published).sort()).toEqual([b1.id, b2.id].sort());
    expect(ids(outcome.released)).toEqual([a2.id, a3.id]);
    expect(outcome.failed).toHaveLength(1);
    const failure = outcome.failed[0]?.failure;
    expect(failure?.id).toBe(a1.id);
    expect(failure?.error).toContain('OUTBOXER_PUBLISH_FAILED');
    expect(failure && 'retryInMs' in failure ? failure.retryInMs : -1).toBeGreaterThanOrEqual(50);
    expect(failure && 'retryInMs' in failure ? failure.retryInMs : -1).toBeLessThanOrEqual(100);
  });

  it('backs off longer on a later attempt', async () => {
    const message = msg('a', { attempts: 2 });
    const outcome = await run([message], new FakePublisher((m) => Promise.reject(transient(m))));
    const failure = outcome.failed[0]?.failure;
    expect(failure && 'retryInMs' in failure ? failure.retryInMs : -1).toBeGreaterThanOrEqual(100);
    expect(failure && 'retryInMs' in failure ? failure.retryInMs : -1).toBeLessThanOrEqual(200);
  });

  it('parks a permanent PublishError as dead at once and lets its key continue', async () => {
    const a1 = msg('a'),
      a2 = msg('a'),
      a3 = msg('a');
    const outcome = await run([a1, a2, a3], new FakePublisher((m) => (m.id === a1.id ? Promise.reject(permanent(m)) : tick())));
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: a1.id, error: expect.stringContaining('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER'), dead: true }]);
    expect(ids(outcome.published)).toEqual([a2.id, a3.id]);
    expect(outcome.released).toEqual([]);
  });

  it('parks a retryable failure as dead once attempts reach maxAttempts', async () => {
    const a1 = msg('a', { attempts: 3 }),
      a2 = msg('a');
    const outcome = await run([a1, a2], new FakePublisher((m) => (m.id === a1.id ? Promise.reject(transient(m)) : tick())));
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: a1.id, error: expect.stringContaining('OUTBOXER_PUBLISH_FAILED'), dead: true }]);
    expect(ids(outcome.published)).toEqual([a2.id]);
  });

  it('still publishes a message whose last allowed attempt succeeds', async () => {
    const message = msg('a', { attempts: 3 });
    expect(ids((await run([message], new FakePublisher())).published)).toEqual([message.id]);
  });

  it('parks without publishing a message whose attempts exceed maxAttempts (lost leases)', async () => {
    const lost = msg('a', { attempts: 4, lastError: 'OUTBOXER_LEASE_EXPIRED: lease taken over' });
    const next = msg('a');
    const publisher = new FakePublisher();
    const outcome = await run([lost, next], publisher);
    expect(ids(publisher.started)).toEqual([next.id]);
    const failure = outcome.failed[0]?.failure;
    expect(failure).toMatchObject({ id: lost.id, dead: true });
    expect(failure?.error).toContain('3 attempts');
    expect(failure?.error).toContain('OUTBOXER_LEASE_EXPIRED');
    expect(ids(outcome.published)).toEqual([next.id]);
  });

  it('handles a publisher that throws synchronously, and never echoes a thrown non-error', async () => {
    const a1 = msg('a'),
      b1 = msg('b');
    const publisher: Publisher = {
      name: 'sync-thrower',
      capabilities: {},
      publish(m) {
        if (m.id === a1.id) throw new TypeError('socket is closed');
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a driver that throws a string: the claim must still handle it
        throw 'canary-secret-value';
      },
      close: async () => undefined,
    };
    const outcome = await run([a1, b1], publisher);
    const errors = Object.fromEntries(outcome.failed.map((f) => [f.failure.id, f.failure]));
    expect(errors[a1.id]).toMatchObject({ error: 'TypeError: socket is closed', retryInMs: expect.any(Number) });
    expect(errors[b1.id]).toMatchObject({ error: 'non-error thrown: string', retryInMs: expect.any(Number) });
    expect(JSON.stringify(outcome)).not.toContain('canary-secret-value');
  });

  it('parks a message over capabilities.maxMessageBytes as dead without calling publish; the limit itself passes', async () => {
    const atLimit = msg('a', { body: JSON.stringify('é'.repeat(4)) }); // 10 bytes
    const over = msg('a', { body: JSON.stringify('é'.repeat(5)) }); // 12 bytes, 7 characters
    const after = msg('a');
    const publisher = new FakePublisher(() => tick(), { maxMessageBytes: 10 });
    const outcome = await run([atLimit, over, after], publisher);
    expect(ids(publisher.started)).toEqual([atLimit.id, after.id]);
    expect(outcome.failed.map((f) => f.failure)).toEqual([
      { id: over.id, error: expect.stringContaining('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER'), dead: true },
    ]);
    expect(ids(outcome.published)).toEqual([atLimit.id, after.id]);
  });
  it('parks a stored message that breaks the table contract as dead before any publisher sees it; its key goes on', async () => {
    const broken = msg('a', { topic: 'orders.#' });
    const after = msg('a');
    const publisher = new FakePublisher();
    const outcome = await run([broken, after], publisher);
    expect(ids(publisher.started)).toEqual([after.id]);
    expect(outcome.failed.map((f) => f.failure)).toEqual([
      { id: broken.id, error: expect.stringMatching(/^OUTBOXER_INVALID_TOPIC: .*\(stored before the table checked it\)/), dead: true },
    ]);
  });

  it('counts a binary body by its byte length against capabilities.maxMessageBytes', async () => {
    const atLimit = msg('a', { body: new Uint8Array(10), contentType: 'application/x-protobuf' });
    const over = msg('b', { body: new Uint8Array(11), contentType: 'application/x-protobuf' });
    const publisher = new FakePublisher(() => tick(), { maxMessageBytes: 10 });
    const outcome = await run([atLimit, over], publisher);
    expect(ids(publisher.started)).toEqual([atLimit.id]);
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: over.id, error: expect.stringContaining('is 11 bytes'), dead: true }]);
  });
});

describe('publishClaim: timeouts', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('times a never-settling publish out after exactly publishTimeoutMs and retries it', async () => {
    vi.useFakeTimers();
    const a1 = msg('a'),
      a2 = msg('a');
    let settled = false;
    const pending = run([a1, a2], new FakePublisher(() => new Promise<void>(() => {})), { publishTimeoutMs: 200 }).then((outcome) => {
      settled = true;
      return outcome;
    });
    await vi.advanceTimersByTimeAsync(199);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const outcome = await pending;
    expect(outcome.failed.map((f) => f.failure)).toEqual([
      { id: a1.id, error: expect.stringContaining('OUTBOXER_PUBLISH_TIMEOUT'), retryInMs: expect.any(Number) },
    ]);
    expect(ids(outcome.released)).toEqual([a2.id]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each(['resolves', 'rejects'])('raises no unhandled rejection when a publish %s after losing the race to the timeout', async (how) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let settle = () => {};
      const message = msg('a');
      const publisher = new FakePublisher(
        () =>
          new Promise<void>((resolve, reject) => {
            settle = how === 'resolves' ? resolve : () => reject(transient(message));
          }),
      );
      const outcome = await run([message], publisher, { publishTimeoutMs: 20 });
      expect(outcome.failed[0]?.failure.error).toContain('OUTBOXER_PUBLISH_TIMEOUT');
      settle();
      for (let i = 0; i < 3; i++) await tick();
      expect(unhandled).toEqual([]);
      expect(outcome.published).toEqual([]); // a late confirmation does not rewrite the outcome
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('publishClaim: stopping and lease deadline', () => {
  it('releases everything not yet started once the relay is stopping', async () => {
    let stopping = false;
    const messages = [msg('a'), msg('a'), msg('a'), msg(null), msg(null), msg('b')];
    const publisher = new FakePublisher(async () => {
      stopping = true;
      await tick();
    });
    const outcome = await run(messages, publisher, { maxInFlight: 1 }, { isStopping: () => stopping });
    expect(ids(outcome.published)).toEqual([messages[0]?.id]);
    expect(ids(outcome.released)).toEqual(ids(messages.slice(1)));
    expect(publisher.started).toHaveLength(1);
  });

  it('lets publishes already in flight finish when stopping', async () => {
    let stopping = false;
    const messages = [msg('a'), msg('b'), msg('a'), msg('b')];
    // the relay starts stopping once both keys' first publishes are in flight
    const publisher: FakePublisher = new FakePublisher(async () => {
      if (publisher.started.length === 2) stopping = true;
      await tick();
    });
    const outcome = await run(messages, publisher, { maxInFlight: 4 }, { isStopping: () => stopping });
    expect(ids(outcome.published).sort()).toEqual(ids([messages[0], messages[1]] as OutboxMessage[]).sort());
    expect(ids(outcome.released).sort()).toEqual(ids([messages[2], messages[3]] as OutboxMessage[]).sort());
  });

  it('starts nothing once the publish deadline of the lease has passed', async () => {
    const messages = [msg('a'), msg('a'), msg(null)];
    const publisher = new FakePublisher();
    const outcome = await run(messages, publisher, {}, { deadline: performance.now() - 1 });
    expect(publisher.started).toEqual([]);
    expect(new Set(ids(outcome.released))).toEqual(new Set(ids(messages)));
  });

  it('returns an empty outcome for an empty claim', async () => {
    expect(await run([], new FakePublisher())).toEqual({ published: [], failed: [], released: [], held: new Map(), topicEvents: [] });
  });
});

describe('publishClaim when the broker is unavailable', () => {
  it('releases the message and the rest of its key uncounted, and flags the outage', async () => {
    const [a1, a2, b1] = [msg('a'), msg('a'), msg('b')];
    const publisher = new FakePublisher(async (m) => {
      if (m.key === 'a') throw new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `message ${m.id} was not sent: cannot connect`);
    });
    const outcome = await run([a1, a2, b1] as OutboxMessage[], publisher, { retry });
    expect(ids(outcome.released)).toEqual(ids([a1, a2] as OutboxMessage[]));
    expect(ids(outcome.published)).toEqual(ids([b1] as OutboxMessage[]));
    expect(outcome.failed).toEqual([]);
    expect(outcome.brokerUnavailable).toContain('OUTBOXER_BROKER_UNAVAILABLE');
  });

  it('never parks a message for an outage, even past maxAttempts', async () => {
    const tired = msg(null, { attempts: 3 });
    const publisher = new FakePublisher(async (m) => {
      throw new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `message ${m.id} was not sent`);
    });
    const outcome = await run([tired], publisher, { retry });
    expect(outcome.failed).toEqual([]);
    expect(ids(outcome.released)).toEqual([tired.id]);
  });
});
