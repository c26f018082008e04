import type { InboxClaim, InboxEntryRef, InboxStore } from '../core/ports/inbox-store.js';
import { identify, payloadOf, type RawDelivery, type ReceivedMessage } from './received-message.js';

/** One distinct message of a batch: its inbox entry and its handler, bound to the message. */
export interface BatchItem<Tx> {
  readonly entry: InboxEntryRef;
  readonly run: (tx: Tx) => Promise<void>;
}

export interface PlannedBatch<Tx> {
  /** One item per distinct id, in the order of their first copy. */
  readonly unique: readonly BatchItem<Tx>[];
  /** Per delivery, in the order given: its item, and whether it is that id's first copy (later copies are duplicates). */
  readonly slots: readonly { readonly item: number; readonly first: boolean }[];
}

/**
 * Rebuilds and validates every delivery of a batch before its transaction. `undefined` when any of them cannot be
 * (no id or type, a body that does not parse, an invalid payload, no handler): the batch is then handled one delivery
 * at a time, where each such failure is recorded against its own message.
 */
export async function planBatch<Tx>(
  raws: readonly RawDelivery[],
  consumer: string,
  prepare: (message: ReceivedMessage) => Promise<(tx: Tx) => Promise<void>>,
): Promise<PlannedBatch<Tx> | undefined> {
  const unique: BatchItem<Tx>[] = [];
  const slots: { item: number; first: boolean }[] = [];
  const byId = new Map<string, number>();
  try {
    for (const raw of raws) {
      const { id, type } = identify(raw);
      const seen = byId.get(id);
      if (seen !== undefined) {
        slots.push({ item: seen, first: false });
        continue;
      }
      const key = raw.key === undefined || raw.key === '' ? null : raw.key;
      const body = payloadOf(raw, `message ${id}`);
      const message: ReceivedMessage = Object.freeze({
        id,
        type,
        topic: raw.topic,
        key,
        headers: Object.freeze({ ...raw.headers }),
        ...body,
        deliveryCount: raw.deliveryCount,
      });
      const run = await prepare(message);
      byId.set(id, unique.length);
      slots.push({ item: unique.length, first: true });
      unique.push({ entry: { consumer, id, type, topic: raw.topic, key }, run });
    }
  } catch {
    return undefined;
  }
  return { unique, slots };
}

/** Claims a batch's entries inside `tx` in one call: one claim per entry, in their order. */
export async function claimAll<Tx>(
  store: Required<Pick<InboxStore<Tx>, 'claimMany'>>,
  tx: Tx,
  entries: readonly InboxEntryRef[],
): Promise<readonly InboxClaim[]> {
  const claims = await store.claimMany(tx, entries);
  if (claims.length !== entries.length) throw new Error(`the inbox store's claimMany answered ${claims.length} claims for ${entries.length} entries`);
  return claims;
}
