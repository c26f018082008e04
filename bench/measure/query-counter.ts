import pg from 'pg';

/**
 * Counts the statements each contender sends, at the driver: every `pg` Client.query call, grouped by the
 * connection's application_name (each contender's pools use their own). It sees exactly the relay's round
 * trips (BEGIN and COMMIT included), whatever else runs on the shared server, and works for the npm peer too,
 * whose pools we do not build (it requires the same `pg` module). Server-side counters could not separate
 * the relay from other sessions: pg_stat_statements is not loaded here and pg_stat_database counts the
 * whole database, which other test suites share.
 */
const counts = new Map<string, number>();
let installed = false;

interface CountingClient {
  connectionParameters?: { application_name?: string };
}

export function installQueryCounter(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function countingQuery(this: CountingClient, ...args: unknown[]) {
    const name = this.connectionParameters?.application_name ?? '';
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.apply(this, args);
  };
}

export function queriesSent(applicationName: string): number {
  return counts.get(applicationName) ?? 0;
}
