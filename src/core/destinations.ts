import { ConfigurationError } from './errors.js';
import type { MessageHeaders, OutboxMessage } from './message.js';
import { DEFAULT_DESTINATION, destinationFault, headersFault } from './message-rules.js';
import type { Publisher } from './ports.js';

/**
 * What of a message's envelope goes to a destination: external consumers often get a stripped one. The body, id,
 * topic, type and content type always go.
 */
export interface EnvelopeInput {
  /** `'all'` (default), `'none'`, or the names of the headers that go (case-insensitive). */
  readonly headers?: 'all' | 'none' | readonly string[];
  /** Whether the key goes (default true). Without it the destination's broker sees an unkeyed message. */
  readonly key?: boolean;
}

/** A named destination of a relay: its publisher, and what of the envelope it gets. */
export interface DestinationInput {
  readonly publisher: Publisher;
  readonly envelope?: EnvelopeInput;
}

/** A destination as the relay uses it: resolved and frozen. */
export interface Destination {
  /** `default` for the relay's own publisher (rows stored without a destination). */
  readonly name: string;
  readonly publisher: Publisher;
  /** The key of its pause as a whole (its broker out of reach): `*@<name>`, made once. */
  readonly pauseKey: string;
  /** The message as this destination gets it (the same object when its envelope is whole). */
  shape(message: OutboxMessage): OutboxMessage;
}

/**
 * The relay's publishers by destination: its own (`default`, rows without a destination) and the named ones of
 * `destinations`. Resolved once: names checked, envelopes validated.
 */
export class Destinations {
  readonly #byName: ReadonlyMap<string, Destination>;
  readonly #default: Destination;

  constructor(publisher: Publisher, named: Readonly<Record<string, DestinationInput>> = {}) {
    this.#default = { name: DEFAULT_DESTINATION, publisher, pauseKey: destinationPauseKey(DEFAULT_DESTINATION), shape: (message) => message };
    const byName = new Map<string, Destination>();
    for (const [name, input] of Object.entries(named)) byName.set(name, resolveDestination(name, input));
    this.#byName = byName;
  }

  /** Whether the relay has destinations besides its own publisher (then an unavailable one pauses, not the relay). */
  get fansOut(): boolean {
    return this.#byName.size > 0;
  }

  /** The destination of a row (null: the relay's own publisher); undefined when this relay does not have it. */
  of(destination: string | null | undefined): Destination | undefined {
    // `default` written by plain SQL is the relay's own publisher too, as the reads' COALESCE(destination, 'default') take it
    return destination === null || destination === undefined || destination === DEFAULT_DESTINATION ? this.#default : this.#byName.get(destination);
  }

  /** Every destination, `default` first. */
  all(): readonly Destination[] {
    return [this.#default, ...this.#byName.values()];
  }

  /**
   * What a read's due branch reads (`PartitionReadOptions.dueDestinations`): with named destinations, each of them
   * and `default` except those in `paused`, each with its own take; without, undefined (one due branch).
   */
  dueDestinations(paused: readonly string[]): readonly string[] | undefined {
    if (!this.fansOut) return undefined;
    return this.all()
      .map((d) => d.name)
      .filter((name) => !paused.includes(name));
  }
}

function resolveDestination(name: string, input: DestinationInput): Destination {
  const fault = name === DEFAULT_DESTINATION ? `destination "${DEFAULT_DESTINATION}" is the relay's own publisher: name the others` : destinationFault(name);
  if (fault !== undefined) throw new ConfigurationError('OUTBOXER_INVALID_DESTINATION', `relay option destinations: ${fault}`, { options: ['destinations'] });
  const publisher = (input as Partial<DestinationInput> | null)?.publisher;
  if (typeof publisher?.publish !== 'function') {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_DESTINATION',
      `relay option destinations.${name} needs a publisher (e.g. { publisher: webhookPublisher(...) })`,
      { options: ['destinations'] },
    );
  }
  return { name, publisher, pauseKey: destinationPauseKey(name), shape: envelopeShaper(name, input.envelope ?? {}) };
}

/** The pure function that strips a message's envelope for one destination. */
export function envelopeShaper(name: string, envelope: EnvelopeInput): (message: OutboxMessage) => OutboxMessage {
  const unknown = Object.keys(envelope).filter((field) => field !== 'headers' && field !== 'key');
  if (unknown.length > 0) throw invalidEnvelope(name, `unknown field ${JSON.stringify(unknown[0]?.slice(0, 40))} (known: headers, key)`);
  const headers = envelope.headers ?? 'all';
  const keepKey = envelope.key ?? true;
  if (typeof keepKey !== 'boolean') throw invalidEnvelope(name, 'key must be true or false');
  let pick: ((headers: MessageHeaders) => MessageHeaders) | undefined;
  if (headers === 'none') pick = () => ({});
  else if (Array.isArray(headers)) {
    const names = headers as readonly unknown[];
    const fault = names.some((h) => typeof h !== 'string') ? 'header names must be strings' : headersFault(Object.fromEntries(names.map((h) => [h, ''])));
    if (fault !== undefined) throw invalidEnvelope(name, fault);
    const allowed = new Set(names.map((h) => (h as string).toLowerCase()));
    pick = (all) => Object.fromEntries(Object.entries(all).filter(([header]) => allowed.has(header.toLowerCase())));
  } else if (headers !== 'all') throw invalidEnvelope(name, "headers must be 'all', 'none' or a list of header names");
  if (pick === undefined && keepKey) return (message) => message;
  return (message) => ({
    ...message,
    ...(pick === undefined ? {} : { headers: pick(message.headers) }),
    ...(keepKey ? {} : { key: null }),
  });
}

function invalidEnvelope(name: string, fault: string): ConfigurationError {
  return new ConfigurationError('OUTBOXER_INVALID_OPTION', `relay option destinations.${name}.envelope: ${fault}`, { options: ['destinations'] });
}

/**
 * What orders a message: its key within its destination (rows of one key for two destinations are independent).
 * Undefined for an unkeyed message.
 */
export function keyOf(message: Pick<OutboxMessage, 'key' | 'destination'>): string | undefined {
  if (message.key === null) return undefined;
  return message.destination === null || message.destination === undefined ? message.key : `${message.destination}\u0000${message.key}`;
}

/** The pause key of a message's topic at its destination: the topic for the relay's own publisher, `topic@destination` otherwise. */
export function topicPauseKey(message: OutboxMessage): string {
  return message.destination === null || message.destination === undefined ? message.topic : `${message.topic}@${message.destination}`;
}

/** The pause key of a whole destination (its broker unavailable): `*@destination`. */
export function destinationPauseKey(name: string): string {
  return `*@${name}`;
}

/** What a pause key names: a topic at a destination, or a whole destination (`topic` undefined). */
export function readPauseKey(key: string): { readonly topic: string | undefined; readonly destination: string } {
  const at = key.lastIndexOf('@');
  if (at < 0) return { topic: key, destination: DEFAULT_DESTINATION };
  const topic = key.slice(0, at);
  return { topic: topic === '*' ? undefined : topic, destination: key.slice(at + 1) };
}

/** The destination's name of a message, as logs, hooks and metrics show it (`default` for the relay's own publisher). */
export function destinationName(message: Pick<OutboxMessage, 'destination'>): string {
  return message.destination ?? DEFAULT_DESTINATION;
}
