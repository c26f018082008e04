import { MessageValidationError } from './errors.js';
import { serializeJsonPayload } from './json-payload.js';
import { BINARY_CONTENT_TYPE, JSON_CONTENT_TYPE, type MessageBody } from './message.js';

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
 * is; anything else is serialized once with `JSON.stringify`, and that text is the body from then on (values
 * it would change or drop silently are refused: see json-payload.ts).
 * Throws MessageValidationError naming the field at fault, never its value.
 */
export function toBody(payload: unknown, contentType: unknown, where: string): { body: MessageBody; contentType: string } {
  if (contentType !== undefined) checkContentType(contentType, where);
  if (payload instanceof Uint8Array) {
    return { body: new Uint8Array(payload), contentType: contentType ?? BINARY_CONTENT_TYPE };
  }
  if (ArrayBuffer.isView(payload) || payload instanceof ArrayBuffer) {
    const kind = (payload as object).constructor.name;
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload is a ${kind}; pass a binary body as a Uint8Array or Buffer (with its contentType)`);
  }
  if (contentType !== undefined && !isJsonContentType(contentType)) {
    fail(
      'OUTBOXER_INVALID_CONTENT_TYPE',
      `${where}: contentType ${JSON.stringify(contentType)} is not a JSON media type, but the payload is serialized as JSON; use application/json (or a +json type), or pass the body as a Uint8Array`,
    );
  }
  return { body: serializeJsonPayload(payload, where), contentType: contentType ?? JSON_CONTENT_TYPE };
}

function checkContentType(contentType: unknown, where: string): asserts contentType is string {
  if (typeof contentType !== 'string' || !MEDIA_TYPE.test(contentType) || Buffer.byteLength(contentType) > MAX_CONTENT_TYPE_BYTES) {
    const shown = typeof contentType === 'string' ? JSON.stringify(contentType.slice(0, 80)) : typeof contentType;
    fail(
      'OUTBOXER_INVALID_CONTENT_TYPE',
      `${where}: contentType ${shown} must be a media type such as application/x-protobuf (type/subtype[; parameters], printable ASCII, at most ${MAX_CONTENT_TYPE_BYTES} bytes)`,
    );
  }
}

function fail(code: 'OUTBOXER_PAYLOAD_NOT_JSON' | 'OUTBOXER_INVALID_CONTENT_TYPE', message: string): never {
  throw new MessageValidationError(code, message);
}
