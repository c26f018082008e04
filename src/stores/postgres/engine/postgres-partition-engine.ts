import type { PartitionEngine, ResizeRequest } from '../../../core/ports/partition-engine.js';
import type { PgDatabase } from '../database.js';
import type { TableName } from '../sql.js';
import { readEngineRelays } from './engine-relays.js';
import { readEngineState } from './engine-state.js';
import { cancelResize, resizePartitions } from './resize-partitions.js';

/** The engine of one PostgreSQL table, for the CLI's `status` and `migrate --partitions`. */
export function postgresPartitionEngine(database: PgDatabase, name: TableName): PartitionEngine {
  return Object.freeze({
    readState: () => readEngineState(database, name),
    readRelays: () => readEngineRelays(database, name),
    resize: (request: ResizeRequest) => resizePartitions(database, name, request),
    cancelResize: () => cancelResize(database, name),
  });
}
