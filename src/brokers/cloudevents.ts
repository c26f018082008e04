import { z } from 'zod';
import type { OutboxMessage } from '../core/message.js';

/**
 * Publishing in CloudEvents binary content mode (https://cloudevents.io): the body stays the producer's
 * bytes, and the event's context attributes travel beside it, named as each protocol binding says.
 */
export interface CloudEventsOptions {
  /** The event's `source`: a URI-reference naming the producing context, e.g. `/orders-service` or `urn:acme:orders`. */
  readonly source: string;
}

export interface ResolvedCloudEvents {
  readonly source: string;
}

/** The context attributes of one message, in the CloudEvents canonical string form (datacontenttype aside). */
export type CloudEventAttributes = Readonly<Record<'specversion' | 'id' | 'source' | 'type' | 'time', string> & { subject?: string }>;

const URI_REFERENCE = /^[!-~]+$/;
const MAX_SOURCE_BYTES = 1024;

const SHAPE_FAULT = 'must be { source: "<URI-reference>" }, e.g. { source: "/orders-service" }';
const SOURCE_FAULT = `must be a non-empty URI-reference (printable ASCII, no spaces, at most ${MAX_SOURCE_BYTES} bytes), e.g. "/orders-service"`;

/**
 * The `cloudEvents` option of a publisher's options schema (`cloudEventsOptionSchema.optional()`): the publisher's
 * parseOptions reports its faults as `<publisher> publisher option cloudEvents[.source]: ...`. The shape is checked
 * first, so an unknown key is named as a fault of `cloudEvents`, not taken for an unknown option of the publisher.
 */
export const cloudEventsOptionSchema = z
  .custom<object>((value) => typeof value === 'object' && value !== null && Object.keys(value).every((key) => key === 'source'), { error: SHAPE_FAULT })
  .pipe(
    z.object({
      source: z
        .string({ error: SOURCE_FAULT })
        .refine((source) => URI_REFERENCE.test(source) && Buffer.byteLength(source) <= MAX_SOURCE_BYTES, { error: SOURCE_FAULT }),
    }),
  )
  .transform(({ source }): ResolvedCloudEvents => Object.freeze({ source }));

/**
 * `id` is the outbox id (the same on every copy, as CloudEvents asks of a redelivered event), `type` the
 * message type, `time` when it was stored, `subject` its key when it has one.
 */
export function cloudEventAttributes(message: OutboxMessage, options: ResolvedCloudEvents): CloudEventAttributes {
  const attributes = { specversion: '1.0', id: message.id, source: options.source, type: message.type, time: message.createdAt.toISOString() };
  return Object.freeze(message.key === null ? attributes : { ...attributes, subject: message.key });
}
