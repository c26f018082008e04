import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import { publishClaim } from '../../src/core/publish-claim.js';
import { resolveRelayOptions } from '../../src/core/relay-options.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';
import { seeded } from '../support/seeded-random.js';

/** `no-route`: the message's topic (`gone`) has no destination. */
type Fate = 'ok' | 'transient' | 'permanent' | 'sync-throw' | 'no-route';
const MAX_ATTEMPTS = 3;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Case {
  readonly messages: OutboxMessage[];
  readonly fates: Map<string, Fate>;
  readonly delays: Map<string, number>;
  readonly maxInFlight: number;
}

function generate(random: () => number): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const count = Math.floor(random() * 40);
  const keys = [null, null, 'a', 'b', 'c', 'd', 'e'].slice(0, 2 + Math.floor(random() * 6));
  const messages: OutboxMessage[] = [];
  const fates = new Map<string, Fate>();
  const delays = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const id = `00000000-0000-7000-8000-${(i + 1).toString(16).padStart(12, '0')}`;
    const fate = pick<Fate>(['ok', 'ok', 'ok', 'transient', 'permanent', 'sync-throw', 'no-route']);
    messages.push({
      id,
      seq: String(i + 1),
      topic: fate === 'no-route' ? 'gone' : 't',
      type: 'x',
      key: pick(keys),
      body: '{}',
      contentType: 'application/json',
      headers: {},
      createdAt: new Date(0),
      attempts: 1 + Math.floor(random() * (MAX_ATTEMPTS + 1)), // up to MAX_ATTEMPTS + 1: a lost lease
      lastError: null,
    });
    fates.set(id, fate);
    delays.set(id, Math.floor(random() * 4));
  }
  return { messages, fates, delays, maxInFlight: 1 + Math.floor(random() * 6) };
}

describe('publishClaim over seeded random claims', () => {
  it('keeps every invariant of a claim outcome', async () => {
    const seen = { published: 0, retried: 0, dead: 0, released: 0, held: 0 };
    for (let seed = 1; seed <= 300; seed++) {
      const { messages, fates, delays, maxInFlight } = generate(seeded(seed));
      const started: OutboxMessage[] = [];
      const busyKeys = new Set<string>();
      let inFlight = 0;
      let peak = 0;
      let overlap = false;
      const publisher: Publisher = {
        name: 'fake',
        capabilities: {},
        publish(m) {
          started.push(m);
          const fate = fates.get(m.id);
          if (fate === 'sync-throw') throw new Error('sync');
          if (m.key !== null) {
            if (busyKeys.has(m.key)) overlap = true;
            busyKeys.add(m.key);
          }
          peak = Math.max(peak, ++inFlight);
          return (async () => {
            for (let i = 0; i < (delays.get(m.id) ?? 0); i++) await tick();
            inFlight--;
            if (m.key !== null) busyKeys.delete(m.key);
            if (fate === 'transient') throw new PublishError('OUTBOXER_PUBLISH_FAILED', 'nacked');
            if (fate === 'permanent') throw new PublishError('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', 'too large', { permanent: true });
            if (fate === 'no-route') throw new PublishError('OUTBOXER_UNROUTABLE', 'no route');
          })();
        },
        close: async () => undefined,
      };
      const options = resolveRelayOptions({
        maxInFlight,
        leaseMs: 5000,
        publishTimeoutMs: 1000,
        retry: { baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: MAX_ATTEMPTS, jitter: 0.5 },
      });
      const pauses = new TopicPauses(1000, 8000);
      const outcome = await publishClaim(messages, { publisher, options, publishDeadline: performance.now() + 60_000, isStopping: () => false, pauses });
      const where = `seed ${seed}`;
      const held = [...outcome.held.values()].flatMap((group) => group.messages);
      seen.published += outcome.published.length;
      seen.released += outcome.released.length;
      seen.held += held.length;
      for (const { failure } of outcome.failed) seen['dead' in failure ? 'dead' : 'retried']++;

      // Every message lands in exactly one bucket, and each is published at most once.
      const buckets = [...outcome.published, ...outcome.failed.map((f) => f.message), ...outcome.released, ...held].map((m) => m.id);
      expect(buckets.sort(), where).toEqual(messages.map((m) => m.id).sort());
      expect(new Set(started.map((m) => m.id)).size, where).toBe(started.length);
      for (const { message, failure } of outcome.failed) expect(failure.id, where).toBe(message.id);

      // A key is never in flight twice; concurrency never passes maxInFlight.
      expect(overlap, where).toBe(false);
      expect(peak, where).toBeLessThanOrEqual(maxInFlight);

      // Lost-lease messages are never published: parked dead, or released or held when their key stopped before them.
      for (const m of messages.filter((x) => x.attempts > MAX_ATTEMPTS)) {
        expect(started.includes(m), where).toBe(false);
        const parked = outcome.failed.some((f) => f.message === m && 'dead' in f.failure);
        expect(parked || outcome.released.includes(m) || held.includes(m), where).toBe(true);
      }

      // Per key: publishes start in store order; a retryable failure releases exactly the rest of its key.
      for (const key of new Set(messages.map((m) => m.key))) {
        if (key === null) continue;
        const chain = messages.filter((m) => m.key === key);
        const startedOfKey = started.filter((m) => m.key === key);
        expect(startedOfKey, where).toEqual(chain.filter((m) => startedOfKey.includes(m)));
        const stop = chain.findIndex((m) => outcome.failed.some((f) => f.message === m && 'retryInMs' in f.failure));
        const releasedOfKey = outcome.released.filter((m) => m.key === key);
        expect(releasedOfKey, where).toEqual(stop === -1 ? [] : chain.slice(stop + 1));
      }

      // A missing destination uses up no attempt: the message and the rest of its key are held, uncounted;
      // only the failed publish itself was started; the pause is reported once.
      for (const key of new Set(messages.map((m) => m.key))) {
        const chain = messages.filter((m) => m.key === key);
        const first = chain.findIndex((m) => held.includes(m));
        if (key !== null && first >= 0)
          expect(
            held.filter((m) => m.key === key),
            where,
          ).toEqual(chain.slice(first));
      }
      for (const m of held) {
        expect(!started.includes(m) || fates.get(m.id) === 'no-route', where).toBe(true);
        expect(
          outcome.failed.some((f) => f.message === m),
          where,
        ).toBe(false);
      }
      const pausedEvents = outcome.topicEvents.filter((e) => e.kind === 'paused');
      expect(
        pausedEvents.map((e) => e.topic),
        where,
      ).toEqual(started.some((m) => fates.get(m.id) === 'no-route') ? ['gone'] : []);
      expect(outcome.held.get('gone')?.delayMs ?? 1000, where).toBe(1000);

      // Fates map to outcomes: ok is published, permanent is dead, transient/sync-throw retry until maxAttempts.
      for (const m of started) {
        const fate = fates.get(m.id);
        const failure = outcome.failed.find((f) => f.message === m)?.failure;
        if (fate === 'ok') expect(outcome.published.includes(m), where).toBe(true);
        else if (fate === 'permanent') expect(failure && 'dead' in failure, where).toBe(true);
        else if (fate === 'no-route') expect(held.includes(m), where).toBe(true);
        else if (m.attempts >= MAX_ATTEMPTS) expect(failure && 'dead' in failure, where).toBe(true);
        else {
          const retryInMs = failure && 'retryInMs' in failure ? failure.retryInMs : -1;
          const ceiling = Math.min(1000, 100 * 2 ** (m.attempts - 1));
          expect(retryInMs, where).toBeGreaterThanOrEqual(ceiling / 2);
          expect(retryInMs, where).toBeLessThanOrEqual(ceiling);
        }
      }
    }
    // The generator really reaches every outcome (a vacuous run would pass the checks above).
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(100);
  });
});
