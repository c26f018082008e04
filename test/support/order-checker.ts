/** What a run delivered, checked the way the fault suite counts: no reading of logs. */
export interface DeliveryReport {
  readonly lost: string[];
  readonly phantom: string[];
  readonly duplicates: number;
  readonly orderInversions: number;
}

/**
 * `expected` is every committed message in store order with its key; `delivered` is every delivery
 * (copies included) in arrival order. An inversion is a first delivery of a key's message after a
 * later message of the same key was already delivered.
 */
export function checkDeliveries(expected: readonly { id: string; key: string | null }[], delivered: readonly string[]): DeliveryReport {
  const position = new Map(expected.map((m, index) => [m.id, index]));
  const keyOf = new Map(expected.map((m) => [m.id, m.key]));
  const seen = new Set<string>();
  const highest = new Map<string, number>();
  const phantom: string[] = [];
  let duplicates = 0;
  let orderInversions = 0;
  for (const id of delivered) {
    const index = position.get(id);
    if (index === undefined) {
      phantom.push(id);
      continue;
    }
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    const key = keyOf.get(id);
    if (key === null || key === undefined) continue;
    const top = highest.get(key);
    if (top !== undefined && top > index) orderInversions++;
    else highest.set(key, index);
  }
  const lost = expected.filter((m) => !seen.has(m.id)).map((m) => m.id);
  return { lost, phantom, duplicates, orderInversions };
}
