import type { Logger, PartitionReader } from '../ports.js';
import type { TopicPauses } from '../topic-pauses.js';
import { bounded } from './bounded-statement.js';

/** The longest a relay goes without reading the operators' paused topics while it holds partitions. */
export const PAUSE_REFRESH_MS = 5000;

/**
 * Keeps a relay's copy of the topics operators paused (`PartitionReader.pausedTopics`) at most one period old:
 * one small statement per period, never one per read. The relay calls `refreshIfDue` before it reads; a failed
 * refresh throws, and the relay reads nothing until one succeeds, so it never publishes from a list older than
 * a period plus the loop's backoff. A store without the method has no operator pauses, and nothing is read.
 */
export class OperatorPauseRefresh {
  readonly #reader: PartitionReader;
  readonly #pauses: TopicPauses;
  readonly #periodMs: number;
  readonly #statementMs: number;
  readonly #log: { readonly logger: Logger; readonly owner: string };
  #nextAt = 0;

  constructor(reader: PartitionReader, pauses: TopicPauses, timing: { readonly periodMs: number; readonly statementMs: number }, log: { readonly logger: Logger; readonly owner: string }) {
    this.#reader = reader;
    this.#pauses = pauses;
    this.#periodMs = timing.periodMs;
    this.#statementMs = timing.statementMs;
    this.#log = log;
  }

  /** Reads the paused list when a period has passed since the last successful read (the first call reads at once). */
  async refreshIfDue(now: number): Promise<void> {
    if (this.#reader.pausedTopics === undefined || now < this.#nextAt) return;
    const listed = await bounded(this.#reader.pausedTopics(), this.#statementMs, 'the read of the paused topics');
    const readAt = performance.now();
    this.#nextAt = readAt + this.#periodMs;
    const change = this.#pauses.setOperatorPauses(listed, readAt);
    const { logger, owner } = this.#log;
    for (const topic of change.resumed) logger.info({ owner, topic }, 'topic resumed by an operator: its held messages publish as their holds run out');
    for (const topic of change.paused) {
      logger.warn({ owner, topic, reason: this.#pauses.reason(topic) }, 'topic paused by an operator: its messages are held, uncounted, until it is resumed');
    }
  }
}
