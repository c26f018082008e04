/**
 * A relay process over the PostgreSQL store (see relay-child.ts) in the test's schema: a pool of 3 with the
 * settings the relay daemon gives its own pool (safePoolConfig), owned by the store's database handle.
 */
import pg from 'pg';
import { fromPgPool } from '../../../../src/stores/postgres/database.js';
import { safePoolConfig } from '../../../../src/stores/postgres/pool.js';
import { PostgresOutboxStore } from '../../../../src/stores/postgres/postgres-store.js';
import { readChildConfig, serveRelay } from '../../relay-child.js';

const config = readChildConfig();
const pool = new pg.Pool(safePoolConfig({ connectionString: config.database, max: 3, connectTimeoutMs: 2000 }));
// a killed idle connection reports here, and the pool drops it
pool.on('error', (error) => process.stderr.write(`idle connection failed: ${error.message}\n`));
const database = fromPgPool(pool, { ownsPool: true });
const store = new PostgresOutboxStore(database, {
  ...(config.schema === undefined ? {} : { schema: config.schema }),
  ...(config.table === undefined ? {} : { table: config.table }),
});
await serveRelay(store, config, () => store.close());
