import type { MysqlQueryable } from '../../stores/mysql/database.js';

/**
 * The parts of TypeORM's objects the adapter reads, as structural views: `outboxer/typeorm` loads without
 * typeorm at run time, and these hold for TypeORM 0.3 and 1.x alike (1.x renamed `connection` to `dataSource`).
 */

/** `DataSource` (0.3 and 1.x): its options name the database; the better-sqlite3 driver holds its one connection. */
export interface TypeOrmDataSourceView {
  readonly options: { readonly type: string };
  readonly driver?: { readonly databaseConnection?: unknown };
}

/** `QueryResult` of `queryRunner.query(sql, params, true)`: the rows of a read and the rows a write changed. */
export interface TypeOrmQueryResultView {
  readonly records?: unknown;
  readonly affected?: number;
}

/** A `QueryRunner`: one connection of TypeORM's (`databaseConnection` is protected in its types, public at run time). */
export interface TypeOrmQueryRunnerView {
  readonly isReleased: boolean;
  readonly isTransactionActive: boolean;
  readonly databaseConnection?: unknown;
  query(sql: string, params: unknown[], useStructuredResult: true): Promise<TypeOrmQueryResultView>;
}

/** An `EntityManager`: the root one (`dataSource.manager`) has no query runner, a transaction's has its own. */
export interface TypeOrmManagerView {
  readonly queryRunner?: TypeOrmQueryRunnerView;
  readonly dataSource?: TypeOrmDataSourceView;
  readonly connection?: TypeOrmDataSourceView;
}

/** mysql2's callback connection as TypeORM holds it; `promise()` wraps it without a second connection. */
export interface MysqlCallbackConnectionView {
  promise(): MysqlQueryable;
}

export function isMysqlCallbackConnection(connection: unknown): connection is MysqlCallbackConnectionView {
  return typeof (connection as Partial<MysqlCallbackConnectionView> | null)?.promise === 'function';
}
