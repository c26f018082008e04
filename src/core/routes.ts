import { v5 as uuidv5 } from 'uuid';
import { ConfigurationError, MessageValidationError } from './errors.js';
import type { NewOutboxMessage } from './message.js';
import { DEFAULT_DESTINATION, destinationFault, MAX_KEY_BYTES } from './message-rules.js';
import { compileTopicPattern, type TopicPattern, topicPatternFault } from './topic-pattern.js';

/**
 * Sends a topic to one or more named destinations: `{ topic: 'orders.*', to: ['default', 'partner'] }`.
 * `topic` is an exact topic or a pattern of dot-separated parts where `*` stands for one part and `#` for zero or
 * more (as in webhook routes and AMQP bindings). `default` is the relay's own publisher.
 */
export interface RouteInput {
  readonly topic: string;
  readonly to: readonly string[];
}

/** Separates an idempotency key from the destination of a copy: no key holds a control character. */
const COPY_KEY_SEPARATOR = '\u001f';

interface Route {
  readonly topic: TopicPattern;
  /** Destinations in order; null is `default`. */
  readonly to: readonly (string | null)[];
}

/** The outbox's routes, resolved once: the first route whose topic matches decides a message's destinations. */
export class Routes {
  readonly #routes: readonly Route[];

  constructor(input: readonly RouteInput[] = []) {
    if (!Array.isArray(input)) throw invalid('routes must be a list of { topic, to }');
    this.#routes = (input as readonly RouteInput[]).map((route, index) => resolveRoute(route, index));
  }

  /** The destinations of a topic (null: `default`), or undefined when no route matches. */
  destinationsOf(topic: string): readonly (string | null)[] | undefined {
    if (this.#routes.length === 0) return undefined;
    return this.#routes.find((route) => route.topic.matches(topic))?.to;
  }

  /**
   * One row per destination of each message that names none: the first destination's row keeps the message's
   * id and idempotency key; the others get an id derived from it and the destination's name (a UUIDv5, so a
   * repeated enqueue with the same id collides again on every row) and the key with the destination appended.
   * Returns the rows, and for each message the index of its first row.
   */
  expand(messages: readonly NewOutboxMessage[], named: ReadonlySet<number>): { readonly rows: NewOutboxMessage[]; readonly firstRows: number[] } {
    const rows: NewOutboxMessage[] = [];
    const firstRows: number[] = [];
    messages.forEach((message, index) => {
      firstRows.push(rows.length);
      const to = named.has(index) ? undefined : this.destinationsOf(message.topic);
      if (to === undefined) {
        rows.push(message);
        return;
      }
      to.forEach((destination, position) => rows.push(position === 0 ? { ...message, destination } : copyFor(message, destination)));
    });
    return { rows, firstRows };
  }
}

function copyFor(message: NewOutboxMessage, destination: string | null): NewOutboxMessage {
  const name = destination ?? DEFAULT_DESTINATION;
  const idempotencyKey = message.idempotencyKey === null ? null : `${message.idempotencyKey}${COPY_KEY_SEPARATOR}${name}`;
  if (idempotencyKey !== null && Buffer.byteLength(idempotencyKey) > MAX_KEY_BYTES) {
    throw new MessageValidationError(
      'OUTBOXER_INVALID_KEY',
      `message ${message.id}: its idempotencyKey with the destination ${name} appended is over ${MAX_KEY_BYTES} bytes; shorten the key (fan-out reserves it once per destination)`,
    );
  }
  return { ...message, id: uuidv5(name, message.id), destination, idempotencyKey };
}

function resolveRoute(route: RouteInput, index: number): Route {
  if (typeof route !== 'object' || route === null) throw invalid(`routes[${index}] must be { topic, to }`);
  const { topic, to } = route as Partial<RouteInput>;
  const fault = topicPatternFault(topic);
  if (fault !== undefined) throw invalid(`routes[${index}].topic ${fault}`);
  if (!Array.isArray(to) || to.length === 0) throw invalid(`routes[${index}].to must list one or more destinations (default: the relay's own publisher)`);
  const names = to.map((name: unknown) => {
    if (typeof name !== 'string') throw invalid(`routes[${index}].to holds a destination that is not a string`);
    const fault = destinationFault(name);
    if (fault !== undefined) throw invalid(`routes[${index}].to: ${fault}`);
    return name;
  });
  if (new Set(names).size !== names.length) throw invalid(`routes[${index}].to names a destination twice`);
  return { topic: compileTopicPattern(topic as string), to: names.map((name) => (name === DEFAULT_DESTINATION ? null : name)) };
}

function invalid(message: string): ConfigurationError {
  return new ConfigurationError('OUTBOXER_INVALID_OPTION', `outbox option ${message}`, { options: ['routes'] });
}
