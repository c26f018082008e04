import { z } from 'zod';
import { describeError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { parseOptions, wholeNumber } from '../core/parse-options.js';
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

export type ResolvedInboxRetentionOptions = Readonly<Required<Omit<InboxRetentionOptions, 'logger'>>>;

// Not strict: retention has always ignored options it does not know.
const inboxRetentionSchema = z.object({
  retainProcessedMs: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'ms').default(INBOX_RETENTION_DEFAULTS.retainProcessedMs),
  intervalMs: wholeNumber(1, 2_147_483_647, 'ms').default(INBOX_RETENTION_DEFAULTS.intervalMs),
  batchSize: wholeNumber(1, 100_000).default(INBOX_RETENTION_DEFAULTS.batchSize),
  maxBatchesPerRun: wholeNumber(1, 100_000).default(INBOX_RETENTION_DEFAULTS.maxBatchesPerRun),
});

/** Resolves the retention options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveInboxRetentionOptions(input: Omit<InboxRetentionOptions, 'logger'> = {}): ResolvedInboxRetentionOptions {
  return Object.freeze(parseOptions(inboxRetentionSchema, input, 'inbox retention'));
}

/**
 * Deletes processed inbox entries older than the retention window, in bounded batches (index on
 * `processed_at`), on a timer. Failed and dead entries are never expired: operators settle them.
 */
export class InboxRetention {
  readonly options: ResolvedInboxRetentionOptions;
  readonly #store: Pick<InboxStore, 'purgeProcessed'>;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(store: Pick<InboxStore, 'purgeProcessed'>, options: InboxRetentionOptions = {}) {
    this.#store = store;
    const { logger, ...settings } = options;
    this.#logger = logger ?? silentLogger;
    this.options = resolveInboxRetentionOptions(settings);
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
