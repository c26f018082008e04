import { Counter, Histogram, type Registry } from 'prom-client';
import type { RelayHooks } from '../../core/relay-options.js';
import type { TopicLabels } from './topic-labels.js';

/** The stages of `outboxer_relay_errors_total`, each shown from 0 so that `rate()` sees the first error. */
export const RELAY_ERROR_STAGES = Object.freeze(['lease', 'read', 'mark', 'publish', 'housekeeping'] as const);

/** The relay's counters and commit-to-confirm histogram, moved by the hooks `relayHooks` returns. */
export class RelayCounters {
  readonly #topics: TopicLabels;
  readonly #published: Counter;
  readonly #failures: Counter;
  readonly #dead: Counter;
  readonly #errors: Counter;
  readonly #commitToConfirm: Histogram;

  constructor(registry: Registry, topics: TopicLabels, commitToConfirmBuckets: readonly number[]) {
    this.#topics = topics;
    // the destination: `default` for the relay's own publisher, else a name of its bounded `destinations`
    const labelNames = [...topics.names, 'destination'];
    const registers = [registry];
    this.#published = new Counter({
      name: 'outboxer_published_total',
      help: 'Messages this process published, confirmed by the broker.',
      labelNames,
      registers,
    });
    this.#failures = new Counter({
      name: 'outboxer_publish_failures_total',
      help: 'Failed publish attempts of this process, each retried later or parked dead.',
      labelNames,
      registers,
    });
    this.#dead = new Counter({
      name: 'outboxer_dead_total',
      help: 'Messages this process parked as dead (attempts used up, or a permanent failure).',
      labelNames,
      registers,
    });
    this.#errors = new Counter({
      name: 'outboxer_relay_errors_total',
      help: 'Failed steps of the relay loop by stage (lease, read, mark, publish: broker unreachable, housekeeping); the loop backs off and retries.',
      labelNames: ['stage'],
      registers,
    });
    this.#commitToConfirm = new Histogram({
      name: 'outboxer_commit_to_confirm_seconds',
      help: "Seconds from a message's insert (database clock) to the broker's confirmation (this process's clock).",
      labelNames,
      buckets: [...commitToConfirmBuckets],
      registers,
    });
    for (const stage of RELAY_ERROR_STAGES) this.#errors.inc({ stage }, 0);
    // the relay's own publisher from 0 too, so that `rate()` sees its first message (no series per topic exists yet)
    if (topics.names.length === 0) for (const counter of [this.#published, this.#failures, this.#dead]) counter.inc({ destination: 'default' }, 0);
  }

  /** Hooks that count each event, then call the same hook of `hooks` (every other hook passes through unchanged). */
  hooks(hooks: RelayHooks = {}): RelayHooks {
    const topics = this.#topics;
    return Object.freeze({
      ...hooks,
      onPublished: (event) => {
        const labels = { ...topics.of(event.topic), destination: event.destination };
        this.#published.inc(labels);
        this.#commitToConfirm.observe(labels, Math.max(0, Date.now() - event.createdAt.getTime()) / 1000);
        hooks.onPublished?.(event);
      },
      onRetry: (event) => {
        this.#failures.inc({ ...topics.of(event.topic), destination: event.destination });
        hooks.onRetry?.(event);
      },
      onDead: (event) => {
        const labels = { ...topics.of(event.topic), destination: event.destination };
        this.#failures.inc(labels);
        this.#dead.inc(labels);
        hooks.onDead?.(event);
      },
      onError: (event) => {
        this.#errors.inc({ stage: event.stage });
        hooks.onError?.(event);
      },
    } satisfies RelayHooks);
  }
}
