import { readPauseKey } from '../destinations.js';
import type { Logger, PartitionReader } from '../ports.js';
import type { TopicPauses } from '../topic-pauses.js';
import { bounded } from './bounded-statement.js';

/** The longest a relay goes without reading the operators' paused topics and destinations while it holds partitions. */
export const PAUSE_REFRESH_MS = 5000;

/**
 * Keeps a relay's copy of the topics and destinations operators paused (`PartitionReader.pausedTopics` and
 * `destinationPauses`) at most one period old:
 * two small statements per period, never one per read. The relay calls `refreshIfDue` before it reads; a failed
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

  constructor(
    reader: PartitionReader,
    pauses: TopicPauses,
    timing: { readonly periodMs: number; readonly statementMs: number },
    log: { readonly logger: Logger; readonly owner: string },
  ) {
    this.#reader = reader;
    this.#pauses = pauses;
    this.#periodMs = timing.periodMs;
    this.#statementMs = timing.statementMs;
    this.#log = log;
  }

  /**
   * Reads the paused lists (topics, and destinations where the store has them: two small statements) when a period
   * has passed since the last successful read (the first call reads at once).
   */
  async refreshIfDue(now: number): Promise<void> {
    if (this.#reader.pausedTopics === undefined || now < this.#nextAt) return;
    const reader = this.#reader;
    // one after the other: a refresh takes one connection of the relay's pool, never two
    const listed = await bounded(this.#reader.pausedTopics(), this.#statementMs, 'the read of the paused topics');
    const destinations =
      reader.destinationPauses === undefined ? [] : await bounded(reader.destinationPauses(), this.#statementMs, 'the read of the paused destinations');
    const readAt = performance.now();
    this.#nextAt = readAt + this.#periodMs;
    const change = this.#pauses.setOperatorPauses(listed, readAt, destinations);
    const { logger, owner } = this.#log;
    for (const key of change.resumed) {
      const { topic, destination } = readPauseKey(key);
      if (topic === undefined) logger.info({ owner, destination }, 'destination resumed by an operator: its held messages publish as their holds run out');
      else logger.info({ owner, topic }, 'topic resumed by an operator: its held messages publish as their holds run out');
    }
    for (const key of change.paused) {
      const { topic, destination } = readPauseKey(key);
      const reason = this.#pauses.reason(key);
      if (topic === undefined)
        logger.warn({ owner, destination, reason }, 'destination paused by an operator: its messages (every topic) are held, uncounted, until it is resumed');
      else logger.warn({ owner, topic, reason }, 'topic paused by an operator: its messages are held, uncounted, until it is resumed');
    }
  }
}
