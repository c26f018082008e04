import { ConfigurationError, MessageValidationError } from '../core/errors.js';
import type { OutgoingValidator } from '../core/ports.js';
import { UnknownMessageTypeError } from './errors.js';
import type { ReceivedMessage } from './received-message.js';
import { describeIssues, isStandardSchema, type StandardSchemaV1 } from './standard-schema.js';

/** A handler for one message type: writes its effects through `tx`, the inbox's transaction. */
export type MessageHandler<Tx, Payload = unknown> = (message: ReceivedMessage<Payload>, tx: Tx) => Promise<void> | void;

interface Entry<Tx> {
  readonly schema: StandardSchemaV1;
  readonly handler: MessageHandler<Tx> | undefined;
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * An explicit allow-list: message type -> schema (zod or any Standard Schema) -> handler.
 * Used at enqueue (validate before storing) and at consume (validate, then dispatch). A type that is not
 * registered is an UnknownMessageTypeError (code OUTBOXER_UNKNOWN_TYPE): nothing is ever imported, looked up
 * on an object or constructed from a type name.
 */
export type { OutgoingValidator };

export class MessageRegistry<Tx = unknown> implements OutgoingValidator {
  readonly #entries = new Map<string, Entry<Tx>>();

  /** Registers a type with its schema and (for consumers) its handler. Registering a type twice is an error. */
  register<S extends StandardSchemaV1>(type: string, schema: S, handler?: MessageHandler<Tx, StandardSchemaV1.InferOutput<S>>): this {
    if (typeof type !== 'string' || type === '' || Buffer.byteLength(type) > 255 || CONTROL_CHARACTER.test(type)) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'message registry: a type must be 1 to 255 bytes without control characters');
    }
    if (!isStandardSchema(schema)) {
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `message registry: the schema for ${JSON.stringify(type)} is not a Standard Schema (no "~standard" v1 property)`,
      );
    }
    if (handler !== undefined && typeof handler !== 'function') {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `message registry: the handler for ${JSON.stringify(type)} must be a function`);
    }
    if (this.#entries.has(type)) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `message registry: type ${JSON.stringify(type)} is already registered`);
    }
    this.#entries.set(type, Object.freeze({ schema, handler }));
    return this;
  }

  has(type: string): boolean {
    return this.#entries.has(type);
  }

  get types(): string[] {
    return [...this.#entries.keys()];
  }

  /** The handler registered for `type`, if any (unknown types: UnknownMessageTypeError). */
  handlerFor(type: string): MessageHandler<Tx> | undefined {
    return this.#entry(type).handler;
  }

  /**
   * Validates synchronously; returns the schema's output. Throws UnknownMessageTypeError, a
   * MessageValidationError with code OUTBOXER_SCHEMA_MISMATCH naming the failing paths (never the values),
   * or a ConfigurationError if the schema validates asynchronously (use `parseAsync`). `where` starts the
   * error's message (`message <id>`).
   */
  parse(type: string, payload: unknown, where?: string): unknown {
    const result = this.#entry(type).schema['~standard'].validate(payload);
    if (result instanceof Promise) {
      result.catch(() => undefined);
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `message registry: the schema for ${JSON.stringify(type)} validates asynchronously; use parseAsync`,
      );
    }
    return unwrap(type, result, where);
  }

  /** Like `parse`, for schemas that may validate asynchronously (what consumers use). */
  async parseAsync(type: string, payload: unknown, where?: string): Promise<unknown> {
    return unwrap(type, await this.#entry(type).schema['~standard'].validate(payload), where);
  }

  /**
   * A JSON payload is stored as the schema's output; a binary payload (`Uint8Array`) is checked by the schema
   * (which sees the bytes, as a consumer's does) and stored as given, so its bytes are never re-encoded.
   */
  validateOutgoing(type: string, payload: unknown, where?: string): unknown {
    const output = this.parse(type, payload, where);
    return payload instanceof Uint8Array ? payload : output;
  }

  #entry(type: string): Entry<Tx> {
    const entry = typeof type === 'string' ? this.#entries.get(type) : undefined;
    if (entry === undefined) throw new UnknownMessageTypeError(String(type));
    return entry;
  }
}

/**
 * The schema's output, or OUTBOXER_SCHEMA_MISMATCH: the payload is valid JSON (or bytes) that the schema of its
 * type refuses, a fault of the data or of the schema, never of the encoding (that is OUTBOXER_PAYLOAD_NOT_JSON).
 */
function unwrap(type: string, result: StandardSchemaV1.Result<unknown>, where: string | undefined): unknown {
  if (result.issues !== undefined) {
    const quoted = JSON.stringify(type.slice(0, 100));
    throw new MessageValidationError(
      'OUTBOXER_SCHEMA_MISMATCH',
      `${where === undefined ? '' : `${where}: `}payload of type ${quoted} does not match its schema (${describeIssues(result.issues)}); fix the payload where it is produced, or the schema registered for ${quoted}`,
    );
  }
  return result.value;
}

/** For `Outbox` enqueue: the payload to store (the schema's output), or MessageValidationError / UnknownMessageTypeError. */
export function validateOutgoing(registry: OutgoingValidator, type: string, payload: unknown): unknown {
  return registry.validateOutgoing(type, payload);
}
