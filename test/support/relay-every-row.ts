import { Outbox } from '../../src/core/outbox.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { PgDatabase, SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { v2Timing } from './partition-relay-fixture.js';
import { RecordingPublisher } from './recording-publisher.js';
import { waitFor } from './wait-for.js';

/**
 * Relays the table of `schema` with one relay of this version until `expected` messages reached its publisher, then
 * stops it: what an upgraded table's pending rows become. Returns them in the order the publisher got them.
 */
export async function relayEveryRow(database: PgDatabase, schema: string, expected: number): Promise<OutboxMessage[]> {
  const publisher = new RecordingPublisher();
  const relay = new Outbox<SqlExecutor>(new PostgresOutboxStore(database, { schema })).createRelay(publisher, v2Timing);
  relay.start();
  try {
    await waitFor(() => publisher.delivered.length >= expected, { timeoutMs: 30_000, what: `${expected} messages at the publisher` });
  } finally {
    await relay.stop();
  }
  return publisher.delivered;
}
