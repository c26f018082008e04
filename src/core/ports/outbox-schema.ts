/**
 * The schema role: who owns the tables, and the store's own resources.
 *
 * Contract: `migrate` applies only what is missing, so it may run again and from several processes at
 * once; `migrationSql` is what it would apply. `close` ends the database handle the store was given
 * (whether that ends a pool is the handle's business: `fromPgPool(pool, { ownsPool })`).
 */
export interface OutboxSchema {
  migrate(): Promise<void>;
  /**
   * Optional start check: connects and confirms that the schema is migrated to the version this code needs.
   * Rejects with a MisconfigurationError for what no retry can mend (`OUTBOXER_NOT_MIGRATED`, a wrong password
   * or database, a URL that points at another kind of server), or another OutboxerError while the database is
   * out of reach (`OUTBOXER_DATABASE_UNAVAILABLE`). Default: no check.
   */
  verify?(): Promise<void>;
  /** The DDL `migrate` would apply, for DBAs who apply it themselves. */
  migrationSql(): string;
  close(): Promise<void>;
}
