import pg from 'pg';
import { services } from '../config.js';

/** A pool whose queries the query counter attributes to `applicationName`. */
export function benchPool(applicationName: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max, application_name: applicationName, keepAlive: true });
  pool.on('error', () => undefined); // an idle client dropped by the server is replaced on the next checkout
  return pool;
}

/** A single connection for the harness itself (schemas, bulk loads, counts). */
export async function adminClient(applicationName = 'bench-admin'): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: services.postgresUrl, application_name: applicationName });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;
}

/** Inserts rows in chunks of `chunk` with one INSERT ... SELECT generate_series each, so a 10M load stays bounded. */
export async function bulkLoad(client: pg.Client, total: number, sqlForRange: (from: number, to: number) => string, chunk = 200_000): Promise<void> {
  for (let from = 0; from < total; from += chunk) {
    const to = Math.min(total, from + chunk) - 1;
    await client.query(sqlForRange(from, to));
  }
}
