import { destinationPauseKey } from './destinations.js';
import type { RelayTopicPause } from './ports/outbox-operator.js';

/** A topic pause that began in this batch (reported once per episode) or a paused topic that published again. */
export type TopicEvent =
  | { readonly kind: 'paused'; readonly topic: string; readonly error: string; readonly retryInMs: number }
  | { readonly kind: 'resumed'; readonly topic: string; readonly pausedMs: number };

interface Pause {
  readonly since: number;
  /** When the episode began, by this relay's wall clock (ms since the epoch): what held rows say. */
  readonly sinceAt: number;
  until: number;
  delayMs: number;
  error: string;
}

/** A pause an operator put on a topic or a whole destination (in the store, shared by every relay), as this relay last read it. */
interface OperatorPause {
  /** When this relay first saw it (monotonic ms): its hold windows are counted from here. */
  readonly since: number;
  /** What `last_error` of its held rows says. */
  reason: string;
}

/** What changed when the relay read the operators' pauses again: pause keys (a topic, or `*@<destination>`). */
export interface OperatorPauseChange {
  readonly paused: readonly string[];
  readonly resumed: readonly string[];
}

/** A destination held as a whole now, and by whom: an operator's pause, or the relay itself (its broker out of reach). */
export interface DestinationHold {
  readonly destination: string;
  readonly by: 'operator' | 'relay';
}

/**
 * Topics whose destination is missing (no route, exchange or stream), as one relay saw them, and topics an
 * operator paused. A paused topic's messages are held without a publish until the pause runs out; the next
 * publish then probes: success ends the episode, a failure pauses it again for twice as long (up to `maxMs`).
 * An operator's pause holds the same way, in windows that double from `baseMs` up to `maxMs`, but it is never
 * probed: a held message is due again at the end of the current window and is held again until the operator
 * resumes the topic (`setOperatorPauses`). Pure: the caller passes the monotonic time (and, when an episode
 * starts, the wall-clock time the held rows record; `Date.now()` by default). One entry per topic that was ever
 * paused and never published again.
 */
export class TopicPauses {
  readonly #paused = new Map<string, Pause>();
  readonly #operator = new Map<string, OperatorPause>();

  constructor(
    readonly baseMs: number,
    readonly maxMs: number,
  ) {}

  /**
   * How long `topic`'s messages are still held, in ms; 0 when it is not paused or the pause ran out (probe now).
   * An operator's pause is never 0: the end of its current hold window.
   */
  remainingMs(topic: string, now: number): number {
    const operator = this.#operator.get(topic);
    if (operator !== undefined) return this.#windowLeftMs(now - operator.since);
    const pause = this.#paused.get(topic);
    return pause === undefined ? 0 : Math.max(0, Math.ceil(pause.until - now));
  }

  /**
   * Why `topic` is paused, as its held rows' `last_error` says it: the operator's reason, or the error of the
   * publish that found its destination missing with when this episode began (`relayHoldReason`).
   */
  reason(topic: string): string | undefined {
    const operator = this.#operator.get(topic);
    if (operator !== undefined) return operator.reason;
    const pause = this.#paused.get(topic);
    return pause === undefined ? undefined : relayHoldReason(new Date(pause.sinceAt), pause.error);
  }

  /**
   * Whether an operator paused `key` (as of the last `setOperatorPauses`): a topic, or a whole destination by its
   * pause key (`destinationPauseKey`, `*@<name>`).
   */
  isOperatorPaused(key: string): boolean {
    return this.#operator.has(key);
  }

  /**
   * A publish of `topic` found its destination missing. Starts an episode (`started`), or after a failed probe
   * doubles the pause; a pause still running (another publish found it first) is left as it is.
   * Returns how long to hold the topic's messages from now. `at` is the wall-clock time of `now` (ms since the
   * epoch), kept as when an episode began: operators read it from the held rows.
   */
  pause(topic: string, error: string, now: number, at: number = Date.now()): { readonly delayMs: number; readonly started: boolean } {
    const current = this.#paused.get(topic);
    if (current === undefined) {
      const delayMs = Math.min(this.baseMs, this.maxMs);
      this.#paused.set(topic, { since: now, sinceAt: at, until: now + delayMs, delayMs, error });
      return { delayMs, started: true };
    }
    current.error = error;
    if (current.until > now) return { delayMs: Math.ceil(current.until - now), started: false };
    current.delayMs = Math.min(current.delayMs * 2, this.maxMs);
    current.until = now + current.delayMs;
    return { delayMs: current.delayMs, started: false };
  }

  /** A publish of `topic` was confirmed: ends its episode. Returns how long it was paused, or undefined if it was not. */
  resume(topic: string, now: number): number | undefined {
    const pause = this.#paused.get(topic);
    if (pause === undefined) return undefined;
    this.#paused.delete(topic);
    return Math.round(now - pause.since);
  }

  /**
   * The operators' pauses as the store lists them now (topic and reason; and the destinations paused as a whole,
   * kept under their pause keys `*@<name>`), replacing the previous lists. A pause still listed keeps its hold
   * windows; one no longer listed is resumed: its messages publish once their current hold runs out. Returns the
   * pause keys paused and resumed by this change, sorted. A store without destination pauses lists none.
   */
  setOperatorPauses(
    pauses: readonly { readonly topic: string; readonly reason: string }[],
    now: number,
    destinations: readonly { readonly destination: string; readonly reason: string }[] = [],
  ): OperatorPauseChange {
    const listed = new Map<string, string>();
    // a topic of the form `*@x` is no topic a message can have (the table's rule): it never stands for a destination
    for (const p of pauses) if (!p.topic.startsWith('*@')) listed.set(p.topic, operatorReason(p.reason));
    for (const p of destinations) listed.set(destinationPauseKey(p.destination), operatorReason(p.reason));
    const resumed = [...this.#operator.keys()].filter((key) => !listed.has(key)).sort();
    for (const key of resumed) this.#operator.delete(key);
    const paused: string[] = [];
    for (const [key, reason] of listed) {
      const current = this.#operator.get(key);
      if (current === undefined) {
        this.#operator.set(key, { since: now, reason });
        paused.push(key);
      } else current.reason = reason;
    }
    return { paused: paused.sort(), resumed };
  }

  /**
   * The destinations held as a whole now (pause keys `*@<name>`): those an operator paused, until resumed, and
   * those whose broker is out of reach, until the pause runs out. A read may leave their due rows out; sorted.
   */
  pausedDestinations(now: number): string[] {
    const names = new Set<string>();
    for (const key of this.#operator.keys()) if (key.startsWith('*@')) names.add(key.slice(2));
    for (const [key, pause] of this.#paused) if (key.startsWith('*@') && pause.until > now) names.add(key.slice(2));
    return [...names].sort();
  }

  /**
   * The destinations held as a whole, by whom (an operator's pause first when both hold it): every operator's
   * pause, and every destination in a relay episode (its broker out of reach, until a publish goes through); sorted.
   */
  destinationHolds(): DestinationHold[] {
    const holds = new Map<string, DestinationHold>();
    for (const key of this.#paused.keys()) if (key.startsWith('*@')) holds.set(key.slice(2), { destination: key.slice(2), by: 'relay' });
    for (const key of this.#operator.keys()) if (key.startsWith('*@')) holds.set(key.slice(2), { destination: key.slice(2), by: 'operator' });
    return [...holds.values()].sort((a, b) => (a.destination < b.destination ? -1 : a.destination > b.destination ? 1 : 0));
  }

  /** Topics held now (their destination is missing, or an operator paused them), sorted. */
  topics(): string[] {
    return [...new Set([...this.#paused.keys(), ...this.#operator.keys()])].sort();
  }

  /** Topics in a missing-destination episode. */
  get size(): number {
    return this.#paused.size;
  }

  /**
   * Time left in the hold window that `elapsed` ms into an operator's pause falls in: windows of `baseMs`, then
   * twice as long each, up to `maxMs` and `maxMs` from then on. Computed, not stored: rows held in one window
   * all come due at its end, and at most one window after the operator resumes.
   */
  #windowLeftMs(elapsed: number): number {
    let start = 0;
    let length = Math.max(1, Math.min(this.baseMs, this.maxMs));
    while (length < this.maxMs && start + length <= elapsed) {
      start += length;
      length = Math.min(length * 2, this.maxMs);
    }
    if (start + length <= elapsed) start += Math.floor((elapsed - start) / length) * length;
    return Math.max(1, Math.ceil(start + length - elapsed));
  }
}

/**
 * How `last_error` of a row held because its topic's destination is missing begins. Every relay writes it, so any
 * process reads from the rows which topics relays hold, why and since when (`TopicLag.relayPause`).
 */
export const RELAY_HOLD_PREFIX = 'destination missing since ';

/** What `last_error` says of a row held because its destination is missing: `destination missing since <ISO time>: <error>`. */
export function relayHoldReason(since: Date, error: string): string {
  return `${RELAY_HOLD_PREFIX}${since.toISOString()}: ${error}`;
}

const RELAY_HOLD = /^destination missing since (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z): ([\s\S]*)$/;

/** The episode start and the error of a `relayHoldReason` text; undefined for any other `last_error`. */
export function readRelayHold(lastError: string | null | undefined): { readonly since: Date; readonly error: string } | undefined {
  const match = RELAY_HOLD.exec(lastError ?? '');
  if (match === null) return undefined;
  const since = new Date(match[1] as string);
  return Number.isNaN(since.getTime()) ? undefined : { since, error: match[2] as string };
}

/**
 * A topic's relay pause from its held rows: how many there are, and the smallest and largest of their
 * `relayHoldReason` texts (the time follows the fixed prefix, so the smallest is the earliest episode and the
 * largest the latest). Null when no row is held for a missing destination.
 */
export function relayPauseOf(held: number, firstHold: string | null, lastHold: string | null): RelayTopicPause | null {
  const first = readRelayHold(firstHold);
  const last = readRelayHold(lastHold) ?? first;
  if (!(held > 0) || first === undefined || last === undefined) return null;
  return { reason: last.error, since: first.since, held };
}

/** What `last_error` says of a row held by an operator's pause. */
export function operatorReason(reason: string): string {
  return reason === '' ? 'paused by an operator' : `paused by an operator: ${reason}`;
}
