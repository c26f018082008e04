import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher, PublisherCapabilities } from '../../src/core/ports.js';
import { type ClaimOutcome, publishClaim } from '../../src/core/publish-claim.js';
import { resolveRelayOptions, type RelayOptionsInput } from '../../src/core/relay-options.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';

/** The publisher double and message maker the publishClaim tests share. */
export type Behavior = (message: OutboxMessage) => Promise<void> | void;
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
export const transient = (m: OutboxMessage) => new PublishError('OUTBOXER_PUBLISH_FAILED', `broker nacked ${m.id}`);
export const permanent = (m: OutboxMessage) => new PublishError('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', `${m.id} too large`, { permanent: true });

/** A Publisher (our own port) that records starts, concurrency and per-key overlap. */
export class FakePublisher implements Publisher {
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
export function msg(key: string | null, extra: Partial<OutboxMessage> = {}): OutboxMessage {
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

export const retry = { baseDelayMs: 100, maxDelayMs: 10_000, maxAttempts: 3, jitter: 0.5 };
export function run(
  messages: readonly OutboxMessage[],
  publisher: Publisher,
  input: RelayOptionsInput = {},
  extra: { isStopping?: () => boolean; deadline?: number; pauses?: TopicPauses } = {},
): Promise<ClaimOutcome> {
  const options = resolveRelayOptions({ leaseMs: 5000, publishTimeoutMs: 50, retry, ...input });
  return publishClaim(messages, {
    publisher,
    options,
    publishDeadline: extra.deadline ?? performance.now() + 60_000,
    isStopping: extra.isStopping ?? (() => false),
    pauses: extra.pauses ?? new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs),
  });
}
export const ids = (messages: readonly OutboxMessage[]) => messages.map((m) => m.id);
