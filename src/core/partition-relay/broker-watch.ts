import { DEFAULT_DESTINATION } from '../message-rules.js';
import type { ClaimOutcome } from '../publish-claim.js';
import { describeError } from '../errors.js';
import type { Publisher } from '../ports.js';
import type { RelayOptions } from '../relay-options.js';
import { bounded } from './bounded-statement.js';
import { BrokerTrouble } from './broker-trouble.js';

/** A relay in broker trouble tries its broker this often (or every `brokerTroubleAfterMs`, if shorter). */
const PROBE_INTERVAL_MS = 2000;

/**
 * The relay's side of its broker trouble (`BrokerTrouble`): what publishes and probes found, the reason its
 * beats report, logged once when the trouble begins and once when it ends. A relay in trouble holds no
 * partition, so it has nothing to publish: it probes (`verify`, bounded by the publish timeout), or it would
 * learn that its broker is back only from its publisher's own reconnects, whose backoff grows to half a minute.
 */
export class BrokerWatch {
  readonly #publisher: Publisher;
  readonly #options: RelayOptions;
  readonly #trouble: BrokerTrouble;
  #probing = false;
  #nextProbeAt = 0;
  #logged = false;

  constructor(publisher: Publisher, options: RelayOptions) {
    this.#publisher = publisher;
    this.#options = options;
    this.#trouble = new BrokerTrouble(options.brokerTroubleAfterMs, () => publisher.connectionState?.() ?? 'unknown');
  }

  /**
   * A publisher that connects on its first publish has not tried yet: it tries now, so that the join says
   * whether this relay can publish and one that cannot takes no partition. `Relay.verify()` is where a start
   * fails fast; here a failure is only trouble.
   */
  async firstConnection(): Promise<void> {
    if (this.#publisher.connectionState?.() === 'connecting') await this.#probe();
  }

  /** What a batch found: a confirmed publish, or the broker unavailable for all it tried. */
  observe(outcome: { readonly published: readonly unknown[]; readonly brokerUnavailable?: string }): void {
    if (outcome.published.length > 0) this.#trouble.reachable();
    else if (outcome.brokerUnavailable !== undefined) this.#trouble.unavailable(outcome.brokerUnavailable, performance.now());
  }

  /** Starts a probe when in trouble and one is due; `probed` runs once it ended. */
  probeIfDue(probed: () => void): void {
    if (this.#trouble.troubled && !this.#probing && performance.now() >= this.#nextProbeAt) void this.#probe().then(probed);
  }

  /** The trouble to report now, or `null`; logged once when it begins and when it ends. */
  reason(context: { readonly relayId: string | undefined; readonly partitions: number }): string | null {
    const reason = this.#trouble.reason(performance.now());
    if ((reason !== null) !== this.#logged) {
      this.#logged = reason !== null;
      const fields = { owner: this.#options.owner, relayId: context.relayId };
      if (reason === null) this.#options.logger.info(fields, 'broker reachable again: this relay takes its share of the partitions again');
      else
        this.#options.logger.warn(
          { ...fields, partitions: context.partitions, trouble: reason },
          'broker trouble: this relay gives its partitions to relays that can publish, and takes them back once its broker is reachable',
        );
    }
    return reason;
  }

  async #probe(): Promise<void> {
    const verify = this.#publisher.verify?.bind(this.#publisher);
    if (verify === undefined) return;
    this.#probing = true;
    try {
      await bounded(verify(), this.#options.publishTimeoutMs, `probe of publisher ${this.#publisher.name}`);
      this.#trouble.reachable();
    } catch (error) {
      this.#trouble.unavailable(describeError(error), performance.now());
    } finally {
      this.#probing = false;
      this.#nextProbeAt = performance.now() + Math.min(this.#options.brokerTroubleAfterMs, PROBE_INTERVAL_MS);
    }
  }
}

/** What a batch said of the relay's own publisher, when it also publishes to named destinations. */
export function ownOutcome(outcome: ClaimOutcome): { readonly published: readonly unknown[]; readonly brokerUnavailable?: string } {
  const published = outcome.published.filter((m) => m.destination === null || m.destination === undefined);
  const unavailable = outcome.unavailable?.get(DEFAULT_DESTINATION);
  return unavailable === undefined ? { published } : { published, brokerUnavailable: unavailable };
}
