import { ConfigurationError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import { checkDestinationPause, checkTopicPause } from '../../core/topic-pause-input.js';
import { destinationFilter, destinationFilterFault } from '../destination-filter.js';
import { OpsHttpError } from './ops-http-error.js';

/** Most ids in one retry, purge or delete request. */
export const MAX_IDS_PER_REQUEST = 400;
/** No reason given: the held rows then read `paused by an operator`, as with `outboxer topics pause` without `--reason`. */
export const DEFAULT_PAUSE_REASON = '';

const invalid = (message: string) => new OpsHttpError(400, 'OUTBOXER_INVALID_REQUEST', message);

function object(body: unknown, shape: string, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid(`the body must be a JSON object: ${shape}`);
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw invalid(`unknown field ${JSON.stringify(unknown[0]?.slice(0, 40))}; the body is ${shape}`);
  return body as Record<string, unknown>;
}

/** Which dead messages a retry or purge asks for, and of which destination (`destination` absent: every one). */
export interface DeadSelection {
  readonly ids: readonly string[] | 'all';
  /** As given (`default`: the messages stored without one); absent: every destination. */
  readonly destination?: string;
  /** The ports' filter: `null` for `default`. */
  readonly filter: { readonly destination?: string | null };
}

/**
 * `{"ids": [uuid, ...]}` (1 to 400, lower-cased, duplicates dropped) or `{"all": true}`, each with an optional
 * `"destination": "<name>"` (`default`: the messages stored without one): which dead messages to retry or purge.
 */
export function deadSelection(body: unknown): DeadSelection {
  const shape = '{"ids": ["<uuid>", ...]} or {"all": true}, and optionally "destination": "<name>"';
  const fields = object(body, shape, ['ids', 'all', 'destination']);
  const hasIds = Object.hasOwn(fields, 'ids');
  if (hasIds === Object.hasOwn(fields, 'all')) throw invalid(`give exactly one of ids and all: ${shape}`);
  const destination = Object.hasOwn(fields, 'destination') ? destinationField(fields.destination) : undefined;
  const filter = destination === undefined ? {} : { destination: destinationFilter(destination) };
  const scope = destination === undefined ? {} : { destination };
  if (!hasIds) {
    if (fields.all !== true) throw invalid('all must be true');
    return { ids: 'all', ...scope, filter };
  }
  return { ids: messageIds(fields.ids), ...scope, filter };
}

/** A destination's name, as `--destination` takes it; refused with OUTBOXER_INVALID_REQUEST naming the field. */
function destinationField(value: unknown): string {
  if (typeof value !== 'string') throw invalid('destination must be a string: a destination\'s name, or "default" for the messages stored without one');
  const fault = destinationFilterFault(value);
  if (fault !== undefined) throw invalid(`destination: OUTBOXER_INVALID_DESTINATION: ${fault}`);
  return value;
}

/** `{"ids": [uuid, ...]}` (1 to 400, lower-cased, duplicates dropped): which pending messages to delete. No `all`. */
export function pendingDeletion(body: unknown): readonly string[] {
  return messageIds(object(body, '{"ids": ["<uuid>", ...]}', ['ids']).ids);
}

function messageIds(ids: unknown): readonly string[] {
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_IDS_PER_REQUEST) {
    throw invalid(`ids must be an array of 1 to ${MAX_IDS_PER_REQUEST} message ids`);
  }
  ids.forEach((id: unknown, index) => {
    if (typeof id !== 'string' || !isUuid(id)) throw new OpsHttpError(400, 'OUTBOXER_INVALID_ID', `ids[${index}] is not a message id (a UUID)`);
  });
  return Object.freeze([...new Set((ids as string[]).map((id) => id.toLowerCase()))]);
}

function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ConfigurationError) throw invalid(error.message);
    throw error;
  }
}

/** `{"topic": "...", "reason": "..."}`, checked as the store checks a pause (`checkTopicPause`); an absent or blank reason is stored empty (held rows read `paused by an operator`). */
export function pauseRequest(body: unknown): { readonly topic: string; readonly reason: string } {
  const fields = object(body, '{"topic": "<topic>", "reason": "<why>"}', ['topic', 'reason']);
  const reason = typeof fields.reason === 'string' && fields.reason.trim() === '' ? DEFAULT_PAUSE_REASON : (fields.reason ?? DEFAULT_PAUSE_REASON);
  return checked(() => checkTopicPause(fields.topic, typeof reason === 'string' ? reason.trim() : reason));
}

/** `{"topic": "..."}` */
export function resumeRequest(body: unknown): { readonly topic: string } {
  const fields = object(body, '{"topic": "<topic>"}', ['topic']);
  return { topic: checked(() => checkTopicPause(fields.topic)).topic };
}

/**
 * `{"destination": "...", "reason": "..."}`, checked as the store checks a destination pause (`checkDestinationPause`:
 * a destination's name, or `default` for the relay's own publisher); an absent or blank reason is stored empty.
 */
export function destinationPauseRequest(body: unknown): { readonly destination: string; readonly reason: string } {
  const fields = object(body, '{"destination": "<name>", "reason": "<why>"}', ['destination', 'reason']);
  const reason = typeof fields.reason === 'string' && fields.reason.trim() === '' ? DEFAULT_PAUSE_REASON : (fields.reason ?? DEFAULT_PAUSE_REASON);
  return checked(() => checkDestinationPause(fields.destination, typeof reason === 'string' ? reason.trim() : reason));
}

/** `{"destination": "..."}` */
export function destinationResumeRequest(body: unknown): { readonly destination: string } {
  const fields = object(body, '{"destination": "<name>"}', ['destination']);
  return { destination: checked(() => checkDestinationPause(fields.destination)).destination };
}
