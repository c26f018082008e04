import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../../core/errors.js';
import type { DeadMessage, NewOutboxMessage, OutboxMessage } from '../../core/message.js';
import type { Claim, ClaimRequest, FailedMessage, OutboxStats, OutboxStore } from '../../core/ports.js';
import { affectedRows, type PgDatabase, type SqlExecutor } from './database.js';
import { migrationScript, runMigrations } from './migrations.js';
import { buildStatements, resolveTableName, type Statements, type TableName } from './sql.js';

export interface PostgresStoreOptions {
  /** Schema of the outbox table; created by `migrate` if missing. Default `public`. */
  readonly schema?: string;
  /** Name of the outbox table. Default `outbox`. */
  readonly table?: string;
  /**
   * How long published rows are kept, in ms. 0 (the default) deletes a row as soon as its publish is
   * confirmed, which keeps the table small; a positive value keeps it with state `published`
   * until `purgePublished` (the relay's housekeeping) removes it.
   */
  readonly retainPublishedMs?: number;
  /** How long an enqueue's idempotency key is remembered, in ms. Default 24 h. */
  readonly idempotencyWindowMs?: number;
}

interface MessageRow {
  seq: string;
  id: string;
  topic: string;
  type: string;
  key: string | null;
  payload_json: string;
  headers: Record<string, string> | string;
  created_at: Date | string;
  attempts: number;
  last_error: string | null;
}

interface DeadRow {
  id: string;
  topic: string;
  type: string;
  key: string | null;
  attempts: number;
  reason: string;
  created_at: Date | string;
  dead_at: Date | string;
}

interface StatsRow {
  pending: number;
  scheduled: number;
  in_flight: number;
  published: number;
  dead: number;
  oldest_pending_age_seconds: number | string;
}

const BULK_BATCH = 1000;

/** The PostgreSQL store; the same SQL serves `pg` and PGlite (see `fromPgPool` and `fromPglite`). */
export class PostgresOutboxStore implements OutboxStore<SqlExecutor> {
  readonly tableName: TableName;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly #database: PgDatabase;
  readonly #sql: Statements;

  constructor(database: PgDatabase, options: PostgresStoreOptions = {}) {
    this.#database = database;
    this.tableName = resolveTableName(options.schema ?? 'public', options.table ?? 'outbox');
    this.retainPublishedMs = options.retainPublishedMs ?? 0;
    this.idempotencyWindowMs = options.idempotencyWindowMs ?? 24 * 60 * 60 * 1000;
    if (!Number.isSafeInteger(this.idempotencyWindowMs) || this.idempotencyWindowMs < 1) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'idempotencyWindowMs must be a whole number of ms >= 1');
    }
    if (!Number.isInteger(this.retainPublishedMs) || this.retainPublishedMs < 0) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'retainPublishedMs must be a whole number of ms >= 0 (0 deletes rows once published)');
    }
    this.#sql = buildStatements(this.tableName);
  }

  async insert(tx: SqlExecutor, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
    if (messages.length === 0) return [];
    const firstIds = await this.#reserveIdempotencyKeys(tx, messages);
    const ids = messages.map((m) => (m.idempotencyKey === null ? m.id : (firstIds.get(m.idempotencyKey) ?? m.id)));
    const fresh = firstIds.size === 0 ? messages : messages.filter((m, i) => ids[i] === m.id);
    if (fresh.length > 0) await this.#insertRows(tx, fresh);
    return ids;
  }

  /** Maps each idempotency key of the batch to the id of the message stored (or now reserved) under it. */
  async #reserveIdempotencyKeys(tx: SqlExecutor, messages: readonly NewOutboxMessage[]): Promise<Map<string, string>> {
    const keyed = messages.filter((m) => m.idempotencyKey !== null);
    const firstIds = new Map<string, string>();
    if (keyed.length === 0) return firstIds;
    const reserved = await tx.query(this.#sql.reserveKeys, [keyed.map((m) => m.idempotencyKey), keyed.map((m) => m.id)]);
    for (const row of reserved.rows as { idempotency_key: string; message_id: string }[]) firstIds.set(row.idempotency_key, row.message_id);
    const missing = [...new Set(keyed.map((m) => m.idempotencyKey as string))].filter((k) => !firstIds.has(k));
    if (missing.length > 0) {
      const found = await tx.query(this.#sql.findKeys, [missing]);
      for (const row of found.rows as { idempotency_key: string; message_id: string }[]) firstIds.set(row.idempotency_key, row.message_id);
    }
    return firstIds;
  }

  async #insertRows(tx: SqlExecutor, messages: readonly NewOutboxMessage[]): Promise<void> {
    await tx.query(this.#sql.insert, [
      messages.map((m) => m.id),
      messages.map((m) => m.topic),
      messages.map((m) => m.type),
      messages.map((m) => m.key),
      messages.map((m) => m.payloadJson),
      messages.map((m) => JSON.stringify(m.headers)),
      messages.map((m) => m.availableAt),
      messages.map((m) => m.delayMs),
    ]);
  }

  async claim(request: ClaimRequest): Promise<Claim> {
    const token = randomUUID();
    const result = await this.#database.query(this.#sql.claim, [request.limit, request.owner, token, request.leaseMs]);
    const messages = (result.rows as MessageRow[]).map(toMessage);
    messages.sort((a, b) => compareSeq(a.seq, b.seq));
    return { token, messages };
  }

  async markPublished(token: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const statement = this.retainPublishedMs > 0 ? this.#sql.retainPublished : this.#sql.deletePublished;
    return affectedRows(await this.#database.query(statement, [token, ids]));
  }

  async markFailed(token: string, failures: readonly FailedMessage[]): Promise<number> {
    if (failures.length === 0) return 0;
    const result = await this.#database.query(this.#sql.markFailed, [
      token,
      failures.map((f) => f.id),
      failures.map((f) => f.error),
      failures.map((f) => ('retryInMs' in f ? f.retryInMs : 0)),
      failures.map((f) => 'dead' in f),
    ]);
    return affectedRows(result);
  }

  async release(token: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return affectedRows(await this.#database.query(this.#sql.release, [token, ids]));
  }

  async purgePublished(limit: number): Promise<number> {
    if (this.retainPublishedMs <= 0) return 0;
    return affectedRows(await this.#database.query(this.#sql.purgePublished, [this.retainPublishedMs, limit]));
  }

  async purgeIdempotencyKeys(limit: number): Promise<number> {
    return affectedRows(await this.#database.query(this.#sql.purgeKeys, [this.idempotencyWindowMs, limit]));
  }

  async stats(): Promise<OutboxStats> {
    const result = await this.#database.query(this.#sql.stats);
    const row = result.rows[0] as StatsRow;
    return {
      pending: Number(row.pending),
      scheduled: Number(row.scheduled),
      inFlight: Number(row.in_flight),
      published: Number(row.published),
      dead: Number(row.dead),
      oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds)),
    };
  }

  async listDead(limit: number): Promise<DeadMessage[]> {
    const result = await this.#database.query(this.#sql.listDead, [limit]);
    return (result.rows as DeadRow[]).map((row) => ({
      id: row.id,
      topic: row.topic,
      type: row.type,
      key: row.key,
      attempts: row.attempts,
      reason: row.reason,
      createdAt: new Date(row.created_at),
      deadAt: new Date(row.dead_at),
    }));
  }

  async retryDead(ids: readonly string[] | 'all'): Promise<number> {
    if (ids === 'all') return this.#inBatches(this.#sql.retryDeadBatch);
    return affectedRows(await this.#database.query(this.#sql.retryDead, [ids]));
  }

  async purgeDead(ids: readonly string[] | 'all'): Promise<number> {
    if (ids === 'all') return this.#inBatches(this.#sql.purgeDeadBatch);
    return affectedRows(await this.#database.query(this.#sql.purgeDead, [ids]));
  }

  async migrate(): Promise<void> {
    await runMigrations(this.#database, this.tableName);
  }

  migrationSql(): string {
    return migrationScript(this.tableName);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  async #inBatches(statement: string): Promise<number> {
    let total = 0;
    for (;;) {
      const changed = affectedRows(await this.#database.query(statement, [BULK_BATCH]));
      total += changed;
      if (changed < BULK_BATCH) return total;
    }
  }
}

function toMessage(row: MessageRow): OutboxMessage {
  return {
    id: row.id,
    seq: row.seq,
    topic: row.topic,
    type: row.type,
    key: row.key,
    payloadJson: row.payload_json,
    headers: typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : row.headers,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    attempts: row.attempts,
    lastError: row.last_error,
  };
}

/** Orders decimal strings of bigints without converting them. */
function compareSeq(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
