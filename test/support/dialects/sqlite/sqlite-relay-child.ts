/** A relay process over the SQLite store (see relay-child.ts), on a connection of its own to the test's file. */
import { openSqliteStore } from '../../../../src/stores/sqlite/open-sqlite.js';
import { readChildConfig, serveRelay } from '../../relay-child.js';

const config = readChildConfig();
const store = await openSqliteStore(config.database, config.table === undefined ? {} : { table: config.table });
await serveRelay(store, config, () => store.close());
