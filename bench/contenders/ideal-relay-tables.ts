import type Database from 'better-sqlite3';
import { SQLITE_NOW_MS } from '../../src/stores/sqlite/migrations.js';

/** One row of the ideal relay's table, as each database's driver gives it back, made alike. */
export interface IdealRow {
  readonly seq: string;
  readonly id: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  readonly payload: string;
  readonly headers: Record<string, string>;
  readonly createdAt: Date;
}

/** What the ideal relay asks of its table, on one connection: the next rows by seq, and deleting confirmed ones. */
export interface IdealTable {
  /** The next `batch` rows after seq `after`, in seq order. */
  read(after: string): Promise<IdealRow[]>;
  remove(seqs: readonly string[]): Promise<void>;
  /** Calls `wake` when a commit is announced (PostgreSQL's LISTEN); the other databases have no such signal. */
  listen(channel: string, wake: () => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * The ideal relay's table on each database: what any outbox needs (the message and its position), keyed by seq
 * only, no other index. PostgreSQL: in `schema`; MariaDB: `outbox` in the URL's database; SQLite: `outbox` in the file.
 */
export function idealTableSql(schema: string): string {
  return `CREATE SCHEMA "${schema}";
    CREATE TABLE "${schema}".outbox (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id uuid NOT NULL DEFAULT gen_random_uuid(),
      topic text NOT NULL, type text NOT NULL, key text, payload json NOT NULL, headers jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT clock_timestamp());`;
}

export const IDEAL_MARIADB_TABLE_SQL = `CREATE TABLE outbox (seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id CHAR(36) NOT NULL DEFAULT (UUID()), topic VARCHAR(255) NOT NULL, type VARCHAR(255) NOT NULL, \`key\` VARCHAR(512) NULL,
  payload LONGTEXT NOT NULL, headers LONGTEXT NOT NULL DEFAULT '{}', created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;

/** A random (version 4 form) UUID, as SQLite has no function for one. */
const SQLITE_UUID = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
  || substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;

export const IDEAL_SQLITE_TABLE_SQL = `CREATE TABLE outbox (seq INTEGER PRIMARY KEY, id TEXT NOT NULL DEFAULT (${SQLITE_UUID}),
  topic TEXT NOT NULL, type TEXT NOT NULL, "key" TEXT, payload TEXT NOT NULL, headers TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}))`;

const COLUMNS = 'seq, id, topic, type, `key`, payload, headers, created_at';

/**
 * `postgres://…` (with `schema`), `mysql://…/<database>` or `mariadb://…`, `sqlite:<file>`; reads `batch` rows at a
 * time. Each driver is imported when its database is asked for, so that the relay process holds only its own.
 */
export async function openIdealTable(url: string, schema: string | undefined, batch: number): Promise<IdealTable> {
  if (url.startsWith('sqlite:')) return sqliteTable(url.slice('sqlite:'.length), batch);
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) return mariadbTable(url.replace(/^mariadb:/, 'mysql:'), batch);
  if (schema === undefined) throw new Error('the ideal relay on PostgreSQL needs --schema');
  return postgresTable(url, schema, batch);
}

async function postgresTable(url: string, schema: string, batch: number): Promise<IdealTable> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, application_name: 'bench ideal relay' });
  await client.connect();
  const table = `"${schema}".outbox`;
  const text = `SELECT seq, id, topic, type, key, payload::text AS payload, headers, created_at FROM ${table} WHERE seq > $1 ORDER BY seq LIMIT ${batch}`;
  return {
    async read(after) {
      const { rows } = await client.query<Omit<IdealRow, 'createdAt'> & { created_at: Date }>({ name: 'ideal_read', text, values: [after] });
      return rows.map(({ created_at, ...row }) => ({ ...row, createdAt: created_at }));
    },
    async remove(seqs) {
      await client.query({ name: 'ideal_delete', text: `DELETE FROM ${table} WHERE seq = ANY($1::int8[])`, values: [seqs] });
    },
    async listen(channel, wake) {
      client.on('notification', wake);
      await client.query(`LISTEN "${channel}"`);
    },
    close: () => client.end(),
  };
}

type DriverRow = Omit<IdealRow, 'seq' | 'headers' | 'createdAt'> & { seq: number | string; headers: string; created_at: Date | number };

const alike = ({ seq, headers, created_at, ...row }: DriverRow): IdealRow => ({
  ...row,
  seq: String(seq),
  headers: JSON.parse(headers) as Record<string, string>,
  createdAt: new Date(created_at),
});

/** One mysql2 connection; statements prepared once (`execute`), the delete's per list length. */
async function mariadbTable(url: string, batch: number): Promise<IdealTable> {
  const { createConnection } = await import('mysql2/promise');
  const connection = await createConnection({ uri: url });
  const read = `SELECT ${COLUMNS} FROM outbox WHERE seq > ? ORDER BY seq LIMIT ${batch}`;
  return {
    async read(after) {
      const [rows] = await connection.execute(read, [after]);
      return (rows as DriverRow[]).map(alike);
    },
    async remove(seqs) {
      await connection.execute(`DELETE FROM outbox WHERE seq IN (${seqs.map(() => '?').join(',')})`, [...seqs]);
    },
    listen: async () => undefined,
    close: () => connection.end(),
  };
}

/** One better-sqlite3 connection in WAL mode, as outboxer's store opens its own; statements prepared once. */
async function sqliteTable(path: string, batch: number): Promise<IdealTable> {
  // better-sqlite3 is CommonJS (`export =`): its constructor is the module's default export
  const { default: Sqlite } = (await import('better-sqlite3')) as unknown as { default: typeof Database };
  const handle = new Sqlite(path);
  handle.pragma('journal_mode = WAL');
  const read = handle.prepare(`SELECT ${COLUMNS.replace('`key`', '"key"')} FROM outbox WHERE seq > ? ORDER BY seq LIMIT ${batch}`);
  const deletes = new Map<number, Database.Statement>();
  return {
    read: async (after) => (read.all(Number(after)) as DriverRow[]).map(alike),
    async remove(seqs) {
      const remove = deletes.get(seqs.length) ?? handle.prepare(`DELETE FROM outbox WHERE seq IN (${seqs.map(() => '?').join(',')})`);
      deletes.set(seqs.length, remove);
      remove.run(...seqs.map(Number));
    },
    listen: async () => undefined,
    close: async () => void handle.close(),
  };
}
