import { Counter, Histogram, type Registry } from 'prom-client';
import type { InboxHooks } from '../../consumer/inbox-options.js';
import type { TopicLabels } from './topic-labels.js';

/** Seconds a handler runs, from a quick row write to a slow call out. */
export const HANDLER_DURATION_BUCKETS: readonly number[] = Object.freeze([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);

/** The consumer counters and handler histogram (label `consumer`), moved by the hooks `inboxHooks` returns. */
export class ConsumerCounters {
  readonly #topics: TopicLabels;
  readonly #processed: Counter;
  readonly #duplicates: Counter;
  readonly #failures: Counter;
  readonly #dead: Counter;
  readonly #duration: Histogram;

  constructor(registry: Registry, topics: TopicLabels) {
    this.#topics = topics;
    const labelNames = ['consumer', ...topics.names];
    const registers = [registry];
    this.#processed = new Counter({
      name: 'outboxer_consumer_processed_total',
      help: 'Messages an inbox handled: the handler ran and its writes committed with the inbox entry.',
      labelNames,
      registers,
    });
    this.#duplicates = new Counter({
      name: 'outboxer_consumer_duplicates_total',
      help: 'Deliveries an inbox skipped: the message was already processed (or dead) for this consumer.',
      labelNames,
      registers,
    });
    this.#failures = new Counter({
      name: 'outboxer_consumer_failures_total',
      help: 'Failed handlings (rolled back), each retried later or parked dead.',
      labelNames,
      registers,
    });
    this.#dead = new Counter({ name: 'outboxer_consumer_dead_total', help: 'Messages an inbox parked as dead with their reason.', labelNames, registers });
    this.#duration = new Histogram({
      name: 'outboxer_consumer_handler_duration_seconds',
      help: 'Seconds the handler ran (its own run time, inside the inbox transaction), whether it succeeded or threw.',
      labelNames,
      buckets: [...HANDLER_DURATION_BUCKETS],
      registers,
    });
  }

  /** Hooks for the inbox of `consumer` that count each event, then call the same hook of `hooks`. */
  hooks(consumer: string, hooks: InboxHooks = {}): InboxHooks {
    if (!this.#topics.enabled) {
      // series from 0 for this consumer, so that rate() sees its first event
      for (const counter of [this.#processed, this.#duplicates, this.#failures, this.#dead]) counter.inc({ consumer }, 0);
    }
    const labels = (topic: string): Record<string, string> => ({ consumer, ...this.#topics.of(topic) });
    const observe = (topic: string, durationMs: number | undefined): void => {
      if (durationMs !== undefined) this.#duration.observe(labels(topic), durationMs / 1000);
    };
    return Object.freeze({
      ...hooks,
      onProcessed: (event) => {
        this.#processed.inc(labels(event.topic));
        observe(event.topic, event.durationMs);
        hooks.onProcessed?.(event);
      },
      onDuplicate: (event) => {
        this.#duplicates.inc(labels(event.topic));
        hooks.onDuplicate?.(event);
      },
      onRetry: (event) => {
        this.#failures.inc(labels(event.topic));
        observe(event.topic, event.durationMs);
        hooks.onRetry?.(event);
      },
      onDead: (event) => {
        const eventLabels = labels(event.topic);
        this.#failures.inc(eventLabels);
        this.#dead.inc(eventLabels);
        observe(event.topic, event.durationMs);
        hooks.onDead?.(event);
      },
    } satisfies InboxHooks);
  }
}
