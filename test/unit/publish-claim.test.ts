import { afterEach, describe, expect, it, vi } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher, PublisherCapabilities } from '../../src/core/ports.js';
import { type ClaimOutcome, publishClaim } from '../../src/core/publish-claim.js';
import { resolveRelayOptions, type RelayOptionsInput } from '../../src/core/relay-options.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';

type Behavior = (message: OutboxMessage) => Promise<void> | void;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const transient = (m: OutboxMessage) => new PublishError('OUTBOXER_PUBLISH_FAILED', `broker nacked ${m.id}`);
const permanent = (m: OutboxMessage) => new PublishError('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', `${m.id} too large`, { permanent: true });

/** A Publisher (our own port) that records starts, concurrency and per-key overlap. */
class FakePublisher implements Publisher {
  readonly name = 'fake';
  readonly started: OutboxMessage[] = [];
  inFlight = 0;
  maxInFlight = 0;
  keyOverlap = false;
  readonly #keys = new Set<string>();
  constructor(
    public behavior: Behavior = () => tick(),
    readonly capabilities: PublisherCapabilities = {},
  ) {}

  publish(message: OutboxMessage): Promise<void> {
    this.started.push(message);
    if (message.key !== null) {
      if (this.#keys.has(message.key)) this.keyOverlap = true;
      this.#keys.add(message.key);
    }
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    const done = () => {
      this.inFlight--;
      if (message.key !== null) this.#keys.delete(message.key);
    };
    let result: Promise<void> | void;
    try {
      result = this.behavior(message);
    } catch (error) {
      done();
      throw error;
    }
    return Promise.resolve(result).finally(done);
  }

  async close(): Promise<void> {}
}

let seq = 0;
function msg(key: string | null, extra: Partial<OutboxMessage> = {}): OutboxMessage {
  seq++;
  return {
    id: `00000000-0000-7000-8000-${seq.toString(16).padStart(12, '0')}`,
    seq: String(seq),
    topic: 'orders',
    type: 'order.created',
    key,
    body: '{}',
    contentType: 'application/json',
    headers: {},
    createdAt: new Date(0),
    attempts: 1,
    lastError: null,
    ...extra,
  };
}

const retry = { baseDelayMs: 100, maxDelayMs: 10_000, maxAttempts: 3, jitter: 0.5 };
function run(messages: readonly OutboxMessage[], publisher: Publisher, input: RelayOptionsInput = {}, extra: { isStopping?: () => boolean; deadline?: number; pauses?: TopicPauses } = {}): Promise<ClaimOutcome> {
  const options = resolveRelayOptions({ leaseMs: 5000, publishTimeoutMs: 50, retry, ...input });
  return publishClaim(messages, {
    publisher,
    options,
    publishDeadline: extra.deadline ?? performance.now() + 60_000,
    isStopping: extra.isStopping ?? (() => false),
    pauses: extra.pauses ?? new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs),
  });
}
const ids = (messages: readonly OutboxMessage[]) => messages.map((m) => m.id);

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
    const outcome = await run(keys.map((key) => msg(key)), publisher, { maxInFlight });
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
    const a1 = msg('a'), a2 = msg('a'), a3 = msg('a'), b1 = msg('b'), b2 = msg('b');
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
    const a1 = msg('a'), a2 = msg('a'), a3 = msg('a');
    const outcome = await run([a1, a2, a3], new FakePublisher((m) => (m.id === a1.id ? Promise.reject(permanent(m)) : tick())));
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: a1.id, error: expect.stringContaining('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER'), dead: true }]);
    expect(ids(outcome.published)).toEqual([a2.id, a3.id]);
    expect(outcome.released).toEqual([]);
  });

  it('parks a retryable failure as dead once attempts reach maxAttempts', async () => {
    const a1 = msg('a', { attempts: 3 }), a2 = msg('a');
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
    const a1 = msg('a'), b1 = msg('b');
    const publisher: Publisher = {
      name: 'sync-thrower',
      capabilities: {},
      publish(m) {
        if (m.id === a1.id) throw new TypeError('socket is closed');
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
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: over.id, error: expect.stringContaining('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER'), dead: true }]);
    expect(ids(outcome.published)).toEqual([atLimit.id, after.id]);
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
    const a1 = msg('a'), a2 = msg('a');
    let settled = false;
    const pending = run([a1, a2], new FakePublisher(() => new Promise<void>(() => {})), { publishTimeoutMs: 200 }).then((outcome) => {
      settled = true;
      return outcome;
    });
    await vi.advanceTimersByTimeAsync(199);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const outcome = await pending;
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: a1.id, error: expect.stringContaining('OUTBOXER_PUBLISH_TIMEOUT'), retryInMs: expect.any(Number) }]);
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

describe('publishClaim: a missing destination pauses its topic', () => {
  const noRoute = (m: OutboxMessage) => new PublishError('OUTBOXER_UNROUTABLE', `no route for ${m.id}`);
  const heldIds = (outcome: ClaimOutcome, topic: string) => ids(outcome.held.get(topic)?.messages ?? []);

  it('holds the message and the rest of its key uncounted, reports the pause once, and lets other topics flow', async () => {
    const a1 = msg('a', { topic: 'gone' }), a2 = msg('a', { topic: 'orders' }), b1 = msg('b', { topic: 'gone' });
    const c1 = msg('c', { topic: 'orders' }), u1 = msg(null, { topic: 'orders' });
    const publisher = new FakePublisher((m) => (m.topic === 'gone' ? Promise.reject(noRoute(m)) : tick()));
    const outcome = await run([a1, a2, b1, c1, u1], publisher, { errorBackoffMs: 400, maxErrorBackoffMs: 4000 });
    expect(ids(outcome.published).sort()).toEqual([c1.id, u1.id].sort());
    expect(heldIds(outcome, 'gone').sort()).toEqual([a1.id, a2.id, b1.id].sort());
    expect(outcome.held.get('gone')).toMatchObject({ delayMs: 400, error: expect.stringContaining('OUTBOXER_UNROUTABLE') });
    expect(outcome.failed).toEqual([]); // no attempt counted, nothing parked
    expect(outcome.released).toEqual([]);
    expect(outcome.brokerUnavailable).toBeUndefined();
    expect(outcome.topicEvents).toEqual([{ kind: 'paused', topic: 'gone', error: expect.stringContaining('OUTBOXER_UNROUTABLE'), retryInMs: 400 }]);
    expect(ids(publisher.started)).not.toContain(a2.id); // a2 may not overtake a1
  });

  it('holds a message of a paused topic even past maxAttempts: a hold never parks it', async () => {
    const pauses = new TopicPauses(60_000, 60_000);
    pauses.pause('gone', 'OUTBOXER_NO_STREAM: no stream', performance.now());
    const worn = msg('a', { topic: 'gone', attempts: 4, lastError: 'OUTBOXER_LEASE_EXPIRED: lease taken over' });
    const publisher = new FakePublisher();
    const outcome = await run([worn], publisher, {}, { pauses });
    expect(publisher.started).toEqual([]);
    expect(outcome.failed).toEqual([]);
    expect(heldIds(outcome, 'gone')).toEqual([worn.id]);
  });

  it('holds a paused topic without publishing until the pause runs out, then probes and resumes', async () => {
    const pauses = new TopicPauses(60_000, 60_000);
    pauses.pause('gone', 'OUTBOXER_NO_STREAM: no stream', performance.now());
    const m1 = msg('a', { topic: 'gone' });
    const publisher = new FakePublisher();
    const held = await run([m1], publisher, {}, { pauses });
    expect(publisher.started).toEqual([]);
    expect(heldIds(held, 'gone')).toEqual([m1.id]);
    expect(held.held.get('gone')?.error).toBe('OUTBOXER_NO_STREAM: no stream');
    expect(held.topicEvents).toEqual([]); // the episode was reported when it began

    const probing = new TopicPauses(1, 1);
    probing.pause('gone', 'no stream', performance.now() - 10);
    const resumed = await run([m1], publisher, {}, { pauses: probing });
    expect(ids(resumed.published)).toEqual([m1.id]);
    expect(resumed.topicEvents).toEqual([{ kind: 'resumed', topic: 'gone', pausedMs: expect.any(Number) }]);
    expect(probing.size).toBe(0);
  });

  it('a failed probe pauses again for longer, without a second report', async () => {
    const pauses = new TopicPauses(1, 1000);
    pauses.pause('gone', 'no route', performance.now() - 10);
    const outcome = await run([msg('a', { topic: 'gone' })], new FakePublisher((m) => Promise.reject(noRoute(m))), {}, { pauses });
    expect(outcome.topicEvents).toEqual([]);
    expect(outcome.held.get('gone')?.delayMs).toBe(2);
  });

  it('parks faults of the message itself as dead even on a paused relay, and releases on a broker outage', async () => {
    const big = msg('a'), down = msg('b'), after = msg('b');
    const publisher = new FakePublisher((m) =>
      m.id === big.id ? Promise.reject(permanent(m)) : Promise.reject(new PublishError('OUTBOXER_BROKER_UNAVAILABLE', 'refused')),
    );
    const outcome = await run([big, down, after], publisher);
    expect(outcome.failed.map((f) => f.failure)).toEqual([{ id: big.id, error: expect.stringContaining('TOO_LARGE'), dead: true }]);
    expect(ids(outcome.released)).toEqual([down.id, after.id]);
    expect(outcome.held.size).toBe(0);
    expect(outcome.brokerUnavailable).toContain('OUTBOXER_BROKER_UNAVAILABLE');
  });
});
