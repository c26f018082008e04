import pg from 'pg';

/** One kind of statement the relay sent: how often, its text, the size of its array parameters, its first parameters. */
export interface SentStatement {
  count: number;
  text: string;
  arrays: number[];
  samples: unknown[][];
}

/** The relay's read and completions by their shape; any other statement by its text, without the schema. */
export function statementKind(text: string): string {
  if (text.includes('WITH snap AS MATERIALIZED')) return 'read';
  if (text.includes('WITH locked AS MATERIALIZED')) return text.includes('AS m(partition, seq, id)') ? 'complete (published, by seq)' : 'complete';
  return text
    .replace(/\s+/g, ' ')
    .replace(/"scan_attr_[a-z0-9]+"\./g, '')
    .trim()
    .slice(0, 90);
}

/**
 * Counts at the driver, by kind, every statement of the pg clients named `applicationName`: the returned map fills as
 * they run. The prototype is patched because the store's pool makes its clients where nothing else can reach them.
 */
export function countStatements(applicationName: string): Map<string, SentStatement> {
  const sent = new Map<string, SentStatement>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function counting(this: { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
    if (this.connectionParameters?.application_name === applicationName) {
      const first = args[0] as string | { text: string; values?: unknown[] };
      const text = typeof first === 'string' ? first : first.text;
      const values = (typeof first === 'string' ? args[1] : first.values) as unknown[] | undefined;
      const kind = statementKind(text);
      const entry = sent.get(kind) ?? { count: 0, text, arrays: [], samples: [] };
      entry.count++;
      const firstArray = values?.find(Array.isArray) as unknown[] | undefined;
      const longest = Math.max(0, ...(values ?? []).filter(Array.isArray).map((a) => (a as unknown[]).length));
      entry.arrays.push(kind === 'read' ? (firstArray?.length ?? 0) : longest);
      if (entry.samples.length < 50 && values !== undefined) entry.samples.push(values);
      sent.set(kind, entry);
    }
    return original.apply(this, args);
  };
  return sent;
}
