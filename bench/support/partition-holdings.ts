import type pg from 'pg';

/** How many partitions each relay (by name) holds, read from the table's lease rows. */
export interface Holdings {
  readonly partitions: number;
  /** Relay name → partitions it owns (owned or draining); free partitions are not listed. */
  readonly byRelay: ReadonlyMap<string, number>;
}

export function describeHoldings(holdings: Holdings): string {
  const held = [...holdings.byRelay].map(([name, n]) => `${name} ${n}`).join(', ');
  return `${held || 'nobody'} of ${holdings.partitions}`;
}

/** Every listed relay holds its fair share of all the partitions (floor or ceil of P / n), and nobody else holds any. */
export function fairlySplit(holdings: Holdings, relays: readonly string[]): boolean {
  const floor = Math.floor(holdings.partitions / relays.length);
  let total = 0;
  for (const name of relays) {
    const held = holdings.byRelay.get(name) ?? 0;
    if (held !== floor && held !== floor + 1) return false;
    total += held;
  }
  return total === holdings.partitions && holdings.byRelay.size === relays.length;
}

/** Polls `<schema>.<table>_partitions` joined to `<table>_relays` every `pollMs` until `done` holds. */
export class HoldingsPoller {
  readonly #client: pg.Client;
  readonly #sql: string;
  readonly #pollMs: number;

  constructor(client: pg.Client, schema: string, table: string, pollMs: number) {
    this.#client = client;
    this.#pollMs = pollMs;
    this.#sql = `SELECT r.name, count(*)::int AS held FROM "${schema}"."${table}_partitions" p
      LEFT JOIN "${schema}"."${table}_relays" r ON r.relay_id = p.owner GROUP BY r.name`;
  }

  async read(): Promise<Holdings> {
    const { rows } = await this.#client.query<{ name: string | null; held: number }>(this.#sql);
    const byRelay = new Map<string, number>();
    let partitions = 0;
    for (const row of rows) {
      partitions += row.held;
      if (row.name !== null) byRelay.set(row.name, row.held);
    }
    return { partitions, byRelay };
  }

  /**
   * Resolves with the time (`performance.now()`) the first read that found `done` was sent: the moment it
   * became true lies within one poll interval (plus a round trip) before that.
   */
  async until(what: string, done: (holdings: Holdings) => boolean, timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const sent = performance.now();
      const holdings = await this.read();
      if (done(holdings)) return sent;
      if (sent > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms; holdings: ${describeHoldings(holdings)}`);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, sent + this.#pollMs - performance.now())));
    }
  }
}
