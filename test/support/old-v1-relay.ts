import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import type { PgDatabase, SqlExecutor } from '../../src/stores/postgres/database.js';
import { type MessageRow, toMessage } from '../../src/stores/shared/message-rows.js';

/**
 * What a relay of an older outboxer version (engine v1, removed here) does to a table, as plain SQL: claims rows
 * under a per-row lease token (`lease_owner`, `lease_token`, `lease_until`, `attempts + 1`), marks them under that
 * token, and takes leases at insert time for its in-process hand-off. Simplified (no skip scan, no key quota, no
 * backoff bookkeeping), but the writes are the ones the fence triggers of the switch to v2 must turn into no-ops. Tests of the
 * switch, the fence and the overlap with old relays use it; nothing in src runs these statements.
 */
export interface OldV1Claim {
  readonly token: string;
  readonly messages: readonly OutboxMessage[];
}

const returned = (p: string) => `${p}seq::text AS seq, ${p}id::text AS id, ${p}topic, ${p}type, ${p}key, ${p}payload::text AS payload_json,
  ${p}payload_bytes, ${p}content_type, ${p}headers, ${p}created_at, ${p}attempts, ${p}last_error`;

/** The table, quoted as the store quotes it. */
export function quotedTable(name: { readonly schema: string; readonly table: string }): string {
  return `"${name.schema}"."${name.table}"`;
}

/**
 * Leases up to `limit` rows: heads of keys (no earlier pending row of their key) that are available and not leased,
 * each with the open run of its key behind it (cut at the first row that is not available or is leased).
 */
export async function oldV1Claim(db: SqlExecutor, table: string, request: { readonly owner: string; readonly leaseMs: number; readonly limit: number }): Promise<OldV1Claim> {
  const token = randomUUID();
  const free = (row: string) => `${row}.available_at <= now() AND (${row}.lease_until IS NULL OR ${row}.lease_until <= now())`;
  const result = await db.query(
    `WITH heads AS (
      SELECT o.seq, o.key FROM ${table} o
      WHERE o.state = 'pending' AND ${free('o')}
        AND (o.key IS NULL OR NOT EXISTS (SELECT 1 FROM ${table} p WHERE p.key = o.key AND p.state = 'pending' AND p.seq < o.seq))
      ORDER BY o.seq LIMIT $1 FOR UPDATE SKIP LOCKED
    ), runs AS (
      SELECT r.seq FROM heads h CROSS JOIN LATERAL (
        SELECT x.seq, bool_and(${free('x')}) OVER (ORDER BY x.seq) AS open FROM ${table} x
        WHERE x.key = h.key AND x.state = 'pending' AND x.seq > h.seq ORDER BY x.seq LIMIT $1
      ) r
      WHERE r.open
    ), picked AS (
      SELECT seq FROM (SELECT seq FROM heads UNION ALL SELECT seq FROM runs) s ORDER BY seq LIMIT $1
    )
    UPDATE ${table} u SET lease_owner = $2, lease_token = $3::uuid, lease_until = now() + $4::int8 * interval '1 millisecond', attempts = u.attempts + 1
    FROM picked WHERE u.seq = picked.seq
    RETURNING ${returned('u.')}`,
    [request.limit, request.owner, token, request.leaseMs],
  );
  const messages = (result.rows as MessageRow[]).map(toMessage).sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
  return { token, messages };
}

/** The older mark of a publish (retention off): deletes the rows still leased under `token`. */
export async function oldV1MarkPublished(db: SqlExecutor, table: string, token: string, ids: readonly string[]): Promise<number> {
  return (await db.query(`DELETE FROM ${table} WHERE id = ANY($2::uuid[]) AND lease_token = $1::uuid`, [token, ids])).rowCount ?? 0;
}

/** The older mark of a failure: backs the row off through `available_at` only, as older versions did. */
export async function oldV1MarkFailed(db: SqlExecutor, table: string, token: string, failure: { readonly id: string; readonly error: string; readonly retryInMs: number }): Promise<number> {
  const result = await db.query(
    `UPDATE ${table} SET last_error = $3, available_at = now() + $4::int8 * interval '1 millisecond', lease_owner = NULL, lease_token = NULL, lease_until = NULL
      WHERE id = $2::uuid AND lease_token = $1::uuid`,
    [token, failure.id, failure.error, failure.retryInMs],
  );
  return result.rowCount ?? 0;
}

/**
 * The older hand-off's insert: the row is leased to `lease` as it is inserted when its key allows it (no pending row
 * of the key other than this lease's own). Returns the id, and the message when it kept its lease.
 */
export async function oldV1InsertLeased(
  tx: SqlExecutor,
  table: string,
  message: { readonly topic: string; readonly key: string | null; readonly payload: unknown },
  lease: { readonly owner: string; readonly token: string; readonly leaseMs: number },
): Promise<{ readonly id: string; readonly leased: OutboxMessage | undefined }> {
  const result = await tx.query(
    `INSERT INTO ${table} (topic, key, type, payload, lease_owner, lease_token, lease_until, attempts)
      SELECT $1, $2, 'x', $3::json, CASE WHEN d.free THEN $4 END, CASE WHEN d.free THEN $5::uuid END,
        CASE WHEN d.free THEN clock_timestamp() + $6::int8 * interval '1 millisecond' END, CASE WHEN d.free THEN 1 ELSE 0 END
      FROM (SELECT $2::text IS NULL OR NOT EXISTS (
        SELECT 1 FROM ${table} p WHERE p.key = $2::text AND p.state = 'pending' AND p.lease_token IS DISTINCT FROM $5::uuid) AS free) d
      RETURNING ${returned('')}, lease_token IS NOT NULL AS leased`,
    [message.topic, message.key, JSON.stringify(message.payload), lease.owner, lease.token, lease.leaseMs],
  );
  const row = result.rows[0] as MessageRow & { leased: boolean };
  return { id: row.id, leased: row.leased ? toMessage(row) : undefined };
}

/** An older `outbox.transaction`: inserts leased to `relay`, then hands the leased ones to it after the commit. Returns the ids. */
export async function oldV1Transaction(db: PgDatabase, table: string, relay: OldV1Relay, messages: readonly { readonly topic: string; readonly key: string | null; readonly payload: unknown }[]): Promise<string[]> {
  const lease = relay.lease;
  const inserted = await db.transaction(async (tx) => {
    const rows = [];
    for (const message of messages) rows.push(await oldV1InsertLeased(tx, table, message, lease));
    return rows;
  });
  relay.handOff(lease.token, inserted.flatMap((row) => (row.leased === undefined ? [] : [row.leased])));
  return inserted.map((row) => row.id);
}

/**
 * An older relay's loop, as plain SQL: claim, publish every head (one per key, so keys never overlap), delete what
 * was confirmed under the claim's token; poll when idle. `handOff` publishes rows it leased at insert.
 */
export class OldV1Relay {
  readonly #db: SqlExecutor;
  readonly #table: string;
  readonly #publisher: Publisher;
  readonly #options: { readonly owner: string; readonly leaseMs: number; readonly batchSize: number; readonly pollMs: number };
  readonly #handoffs = new Set<Promise<void>>();
  #stopping = false;
  #running: Promise<void> | undefined;
  #failure: unknown;

  constructor(db: SqlExecutor, table: string, publisher: Publisher, options: { readonly owner: string; readonly leaseMs: number; readonly batchSize: number; readonly pollMs: number }) {
    this.#db = db;
    this.#table = table;
    this.#publisher = publisher;
    this.#options = options;
  }

  get lease(): { readonly owner: string; readonly token: string; readonly leaseMs: number } {
    return { owner: this.#options.owner, token: randomUUID(), leaseMs: this.#options.leaseMs };
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops the loop and waits for the hand-offs; rejects with what ended the loop early, if anything did. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#running;
    await Promise.all([...this.#handoffs]);
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Publishes messages leased under `token` at insert, once their transaction committed. */
  handOff(token: string, messages: readonly OutboxMessage[]): void {
    if (messages.length === 0) return;
    const work = this.#publish({ token, messages })
      .catch((error: unknown) => {
        this.#failure ??= error;
      })
      .finally(() => this.#handoffs.delete(work));
    this.#handoffs.add(work);
  }

  async #loop(): Promise<void> {
    try {
      while (!this.#stopping) {
        const claim = await oldV1Claim(this.#db, this.#table, { owner: this.#options.owner, leaseMs: this.#options.leaseMs, limit: this.#options.batchSize });
        if (claim.messages.length > 0) await this.#publish(claim);
        else await new Promise((resolve) => setTimeout(resolve, this.#options.pollMs));
      }
    } catch (error) {
      this.#failure ??= error;
    }
  }

  /** Messages of one key one after another, in store order; keys and unkeyed messages side by side. */
  async #publish(claim: OldV1Claim): Promise<void> {
    const chains = new Map<string, OutboxMessage[]>();
    for (const message of claim.messages) {
      const chain = message.key === null ? `id:${message.id}` : `key:${message.key}`;
      chains.set(chain, [...(chains.get(chain) ?? []), message]);
    }
    await Promise.all([...chains.values()].map(async (chain) => {
      for (const message of chain) await this.#publisher.publish(message);
    }));
    await oldV1MarkPublished(this.#db, this.#table, claim.token, claim.messages.map((m) => m.id));
  }
}
