import { validateMessage } from '../../src/core/validate-message.js';
import type { PartitionLease, PartitionReadRequest } from '../../src/core/ports.js';
import type { MysqlDatabase } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import type { FreshMysqlDatabase } from './mysql-database.js';

/** A migrated MariaDB store holding all 64 partitions for one relay, with `count` committed rows. */
export interface MysqlRelayWithRows {
  readonly store: MysqlOutboxStore;
  readonly relayId: string;
  readonly leases: readonly PartitionLease[];
  /** A read of every partition from its start, 100 rows each. */
  readonly requests: readonly PartitionReadRequest[];
}

/**
 * Migrates a store on `database` (the fresh database's own unless given, e.g. a recording one), commits `count` messages
 * keyed `key(i)`, joins as relay `name` and takes every partition.
 */
export async function mysqlRelayWithRows(
  fresh: FreshMysqlDatabase,
  options: { readonly name: string; readonly count: number; readonly key: (i: number) => string; readonly database?: MysqlDatabase },
): Promise<MysqlRelayWithRows> {
  const store = new MysqlOutboxStore(options.database ?? fresh.database);
  await store.migrate();
  const messages = Array.from({ length: options.count }, (_, i) =>
    validateMessage({ topic: 't', type: 'x', key: options.key(i), payload: { i } }, { maxPayloadBytes: 100 }),
  );
  await fresh.database.transaction((tx) => store.insert(tx, messages));
  const { relayId } = await store.leases.join({ name: options.name, leaseMs: 60_000 });
  const leases = await store.leases.acquire(relayId, 64);
  const requests = leases.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 100 }));
  return { store, relayId, leases, requests };
}
