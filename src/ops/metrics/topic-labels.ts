/** Distinct `topic` label values one OutboxerMetrics gives out; later topics share `OTHER_TOPIC`. */
export const MAX_TOPIC_LABELS = 200;

/** The `topic` value of every topic past MAX_TOPIC_LABELS. */
export const OTHER_TOPIC = '(other)';

/**
 * Gives the `topic` label of a message, when the user allowed it: the first MAX_TOPIC_LABELS topics keep their
 * name, later ones become `(other)`, so a topic per tenant or per entity cannot grow the series without bound.
 */
export class TopicLabels {
  readonly #enabled: boolean;
  readonly #seen = new Set<string>();

  constructor(enabled: boolean) {
    this.#enabled = enabled;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** The label names to add to a counter or histogram: `['topic']` when enabled, none otherwise. */
  get names(): readonly string[] {
    return this.#enabled ? ['topic'] : [];
  }

  /** The labels of an event about `topic`: `{ topic }` when enabled (bounded), `{}` otherwise. */
  of(topic: string): Record<string, string> {
    if (!this.#enabled) return {};
    if (this.#seen.has(topic)) return { topic };
    if (this.#seen.size >= MAX_TOPIC_LABELS) return { topic: OTHER_TOPIC };
    this.#seen.add(topic);
    return { topic };
  }
}
