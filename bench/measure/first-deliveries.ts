/** One message as a consumer received it: its key and its number (every bench body starts with it). */
export interface Delivery {
  readonly key: string;
  readonly n: number;
}

export interface DeliveryAudit {
  /** Messages written that were never delivered. */
  readonly missing: number;
  /** Deliveries of a message already delivered (at-least-once: a relay killed after a publish, before its completion). */
  readonly duplicates: number;
  /** First deliveries whose number is lower than an earlier first delivery of the same key. */
  readonly keyOrderViolations: number;
}

/**
 * Audits what one queue received, in its order, against messages 0..written-1, each key's written in increasing
 * number. Only first deliveries are judged for order: a redelivery after a takeover repeats a message the new
 * owner found pending, and what matters is that no message of a key went out before an earlier one of it.
 */
export function auditDeliveries(deliveries: Iterable<Delivery>, written: number): DeliveryAudit {
  const seen = new Set<number>();
  const lastByKey = new Map<string, number>();
  let duplicates = 0;
  let keyOrderViolations = 0;
  for (const { key, n } of deliveries) {
    if (seen.has(n)) {
      duplicates++;
      continue;
    }
    seen.add(n);
    const last = lastByKey.get(key);
    if (last !== undefined && n < last) keyOrderViolations++;
    else lastByKey.set(key, n);
  }
  let missing = 0;
  for (let n = 0; n < written; n++) if (!seen.has(n)) missing++;
  return { missing, duplicates, keyOrderViolations };
}
