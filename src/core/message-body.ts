import { MessageValidationError } from './errors.js';
import { BINARY_CONTENT_TYPE, JSON_CONTENT_TYPE, type MessageBody } from './message.js';

/** A `\u0000` escape, or an escaped lone surrogate, not itself escaped: many JSON readers (jsonb too) refuse both. */
const UNSTORABLE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;
/** `type/subtype[; parameters]`: RFC 6838 name characters, printable ASCII parameters (length is bounded apart: bounded repeats make PostgreSQL's regex several times slower). The table checks the same. */
export const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*( *;[ -~]*)?$/;
/** `application/json` or a `+json` type (RFC 6839), with optional parameters. */
export const JSON_MEDIA_TYPE = /^application\/([A-Za-z0-9!#$&^_.+-]*\+)?json( *;[ -~]*)?$/i;
/** AMQP carries the content type as a short string. */
const MAX_CONTENT_TYPE_BYTES = 255;

/** True for the content types whose bodies are JSON text (what consumers parse for their handlers). */
export function isJsonContentType(contentType: string): boolean {
  return JSON_MEDIA_TYPE.test(contentType);
}

/**
 * The body of a payload and its content type: a `Uint8Array` (or `Buffer`) is a binary body, copied as it
 * is; anything else is serialized once with `JSON.stringify`, and that text is the body from then on.
 * Throws MessageValidationError naming the field at fault, never its value.
 */
export function toBody(payload: unknown, contentType: unknown, where: string): { body: MessageBody; contentType: string } {
  if (contentType !== undefined) checkContentType(contentType, where);
  if (payload instanceof Uint8Array) {
    return { body: new Uint8Array(payload), contentType: (contentType as string | undefined) ?? BINARY_CONTENT_TYPE };
  }
  if (ArrayBuffer.isView(payload) || payload instanceof ArrayBuffer) {
    const kind = (payload as object).constructor.name;
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload is a ${kind}; pass a binary body as a Uint8Array or Buffer (with its contentType)`);
  }
  if (contentType !== undefined && !isJsonContentType(contentType as string)) {
    fail(
      'OUTBOXER_INVALID_CONTENT_TYPE',
      `${where}: contentType ${JSON.stringify(contentType)} is not a JSON media type, but the payload is serialized as JSON; use application/json (or a +json type), or pass the body as a Uint8Array`,
    );
  }
  return { body: serializeJson(payload, where), contentType: (contentType as string | undefined) ?? JSON_CONTENT_TYPE };
}

function checkContentType(contentType: unknown, where: string): asserts contentType is string {
  if (typeof contentType !== 'string' || !MEDIA_TYPE.test(contentType) || Buffer.byteLength(contentType) > MAX_CONTENT_TYPE_BYTES) {
    const shown = typeof contentType === 'string' ? JSON.stringify(contentType.slice(0, 80)) : typeof contentType;
    fail('OUTBOXER_INVALID_CONTENT_TYPE', `${where}: contentType ${shown} must be a media type such as application/x-protobuf (type/subtype[; parameters], printable ASCII, at most ${MAX_CONTENT_TYPE_BYTES} bytes)`);
  }
}

function serializeJson(payload: unknown, where: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload, refuseNonFinite());
  } catch (error) {
    if (error instanceof MessageValidationError) throw error;
    // The serializer's own message can quote the payload (property names of a cycle, a toJSON's text).
    const kind = error instanceof Error ? error.name : typeof error;
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload cannot be serialized to JSON (${kind}: a cycle, a BigInt or a throwing toJSON); pass plain data`);
  }
  if (json === undefined) {
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload is ${typeof payload}, which has no JSON form; pass plain data (null is allowed)`);
  }
  if (UNSTORABLE_ESCAPE.test(json)) {
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload holds a NUL character or a lone UTF-16 surrogate, which many JSON readers refuse`);
  }
  return json;

  /** JSON has no NaN or Infinity: `JSON.stringify` would silently write `null`. Names the path of the first one. */
  function refuseNonFinite(): (this: unknown, key: string, value: unknown) => unknown {
    const paths = new WeakMap<object, string>();
    // Runs for every value of every payload at enqueue: the path is built only for objects and for the failure.
    const pathOf = (holder: unknown, key: string): string => {
      const parent = typeof holder === 'object' && holder !== null ? paths.get(holder) : undefined;
      if (parent === undefined) return 'payload';
      if (Array.isArray(holder)) return `${parent}[${key}]`;
      return `${parent}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
    };
    return function (this: unknown, key: string, value: unknown): unknown {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        fail(
          'OUTBOXER_PAYLOAD_NOT_JSON',
          `${where}: ${pathOf(this, key).slice(0, 200)} is ${String(value)}, which JSON cannot represent (JSON.stringify would store null); send a finite number, null or a string`,
        );
      }
      if (typeof value === 'object' && value !== null) paths.set(value, pathOf(this, key));
      return value;
    };
  }
}

function fail(code: 'OUTBOXER_PAYLOAD_NOT_JSON' | 'OUTBOXER_INVALID_CONTENT_TYPE', message: string): never {
  throw new MessageValidationError(code, message);
}
