import { ConfigurationError, describeError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import type { Logger } from '../core/ports.js';
import type { InboxStore } from '../core/ports/inbox-store.js';

export interface InboxRetentionOptions {
  /**
   * How long a processed entry is kept, in ms (default 7 days). It must outlast every redelivery or
   * re-publish of the message (broker redelivery, relay retries, JetStream's duplicate window): a copy that
   * arrives after its entry expired is handled again.
   */
  readonly retainProcessedMs?: number;
  /** Pause between cleanup runs, in ms. Default 60000. */
  readonly intervalMs?: number;
  /** Entries deleted per statement. Default 1000. */
  readonly batchSize?: number;
  /** Statements per run at most, so one run is bounded even after a long pause. Default 100. */
  readonly maxBatchesPerRun?: number;
  readonly logger?: Logger;
}

export const INBOX_RETENTION_DEFAULTS = Object.freeze({ retainProcessedMs: 7 * 24 * 3_600_000, intervalMs: 60_000, batchSize: 1000, maxBatchesPerRun: 100 });

function whole(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `inbox retention option ${name}: must be an integer from ${min} to ${max}`);
  }
  return value;
}

/**
 * Deletes processed inbox entries older than the retention window, in bounded batches (index on
 * `processed_at`), on a timer. Failed and dead entries are never expired: operators settle them.
 */
export class InboxRetention {
  readonly options: Readonly<Required<Omit<InboxRetentionOptions, 'logger'>>>;
  readonly #store: Pick<InboxStore, 'purgeProcessed'>;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(store: Pick<InboxStore, 'purgeProcessed'>, options: InboxRetentionOptions = {}) {
    this.#store = store;
    this.#logger = options.logger ?? silentLogger;
    this.options = Object.freeze({
      retainProcessedMs: whole('retainProcessedMs', options.retainProcessedMs, INBOX_RETENTION_DEFAULTS.retainProcessedMs, 0, Number.MAX_SAFE_INTEGER),
      intervalMs: whole('intervalMs', options.intervalMs, INBOX_RETENTION_DEFAULTS.intervalMs, 1, 2_147_483_647),
      batchSize: whole('batchSize', options.batchSize, INBOX_RETENTION_DEFAULTS.batchSize, 1, 100_000),
      maxBatchesPerRun: whole('maxBatchesPerRun', options.maxBatchesPerRun, INBOX_RETENTION_DEFAULTS.maxBatchesPerRun, 1, 100_000),
    });
  }

  /** One cleanup run: at most `maxBatchesPerRun` statements of `batchSize`; returns how many entries went. */
  runOnce(): Promise<number> {
    this.#running ??= this.#purge().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Runs now and then every `intervalMs` until `stop()`. The timer does not keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    const tick = (): void => {
      this.runOnce().catch((error: unknown) => this.#logger.warn({ error: describeError(error) }, 'inbox retention run failed; trying again next interval'));
    };
    this.#timer = setInterval(tick, this.options.intervalMs);
    this.#timer.unref();
    tick();
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  async #purge(): Promise<number> {
    const { retainProcessedMs, batchSize, maxBatchesPerRun } = this.options;
    let total = 0;
    for (let batch = 0; batch < maxBatchesPerRun; batch++) {
      const deleted = await this.#store.purgeProcessed(retainProcessedMs, batchSize);
      total += deleted;
      if (deleted < batchSize) break;
    }
    if (total > 0) this.#logger.info({ deleted: total }, 'inbox retention: expired processed entries deleted');
    return total;
  }
}
