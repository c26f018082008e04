/**
 * A relay process over the MariaDB store (see relay-child.ts): a mysql2 pool of 3 with the driver's default
 * settings (the store must not depend on them), owned by the store's database handle.
 */
import mysql from 'mysql2/promise';
import { fromMysqlPool, type MysqlPoolLike } from '../../../../src/stores/mysql/database.js';
import { MysqlOutboxStore } from '../../../../src/stores/mysql/mysql-store.js';
import { readChildConfig, serveRelay } from '../../relay-child.js';

const config = readChildConfig();
const pool = mysql.createPool({ uri: config.database, connectionLimit: 3, connectTimeout: 2000 });
// a killed idle connection reports here, and the pool drops it
pool.on('connection', (connection) => connection.on('error', (error: Error) => process.stderr.write(`idle connection failed: ${error.message}\n`)));
const database = fromMysqlPool(pool as unknown as MysqlPoolLike, { ownsPool: true });
const store = new MysqlOutboxStore(database, config.table === undefined ? {} : { table: config.table });
await serveRelay(store, config, () => database.close());
