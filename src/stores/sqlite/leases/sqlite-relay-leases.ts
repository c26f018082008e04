import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../../../core/errors.js';
import type { Membership, PartitionLease, RelayLeases, RelayReport } from '../../../core/ports.js';
import type { SqliteDatabase } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';
import { sqliteLeaseStatements, type SqliteLeaseStatements } from './sqlite-lease-statements.js';
import { readMembership } from './sqlite-membership.js';
import { inReadSnapshot } from './sqlite-read-snapshot.js';
import { checkJoin, troubleOf } from '../../shared/join-checks.js';

const NOW = `SELECT ${SQLITE_NOW_MS} AS now`;

type GiveBack = readonly Pick<PartitionLease, 'partition' | 'epoch'>[];

/**
 * The partition leases of one outbox table in a SQLite file; reached as `store.leases`. Every write is one
 * `BEGIN IMMEDIATE` transaction: SQLite runs one writer at a time (across processes on the same file too), so a
 * reap, its frees and a grant never interleave with another, and fencing needs no row locks.
 */
export class SqliteRelayLeases implements RelayLeases {
  readonly #database: SqliteDatabase;
  readonly #names: SqliteTableNames;
  readonly #sql: SqliteLeaseStatements;

  constructor(database: SqliteDatabase, names: SqliteTableNames) {
    this.#database = database;
    this.#names = names;
    this.#sql = sqliteLeaseStatements(names);
  }

  async join(relay: { readonly name: string; readonly leaseMs: number } & RelayReport): Promise<Membership> {
    checkJoin(relay);
    const relayId = randomUUID();
    const trouble = troubleOf(relay);
    return this.#database.write(() => {
      const now = this.#now();
      this.#database.run(this.#sql.join, [{ relayId, name: relay.name, leaseMs: relay.leaseMs, now }]);
      this.#report(relayId, trouble, now);
      return readMembership(this.#database, this.#names, relayId, now, true);
    });
  }

  heartbeat(relayId: string, options: { readonly leaving?: boolean } & RelayReport = {}): Promise<Membership> {
    let trouble: string | null;
    try {
      trouble = troubleOf(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#database.write(() => {
      const now = this.#now();
      const beat = this.#database.run(this.#sql.heartbeat, [{ now, leaving: options.leaving === true ? 1 : 0, relayId }]);
      if (beat === 1) this.#report(relayId, trouble, now);
      return readMembership(this.#database, this.#names, relayId, now, beat === 1);
    });
  }

  acquire(relayId: string, max: number): Promise<readonly PartitionLease[]> {
    if (!Number.isSafeInteger(max) || max < 0) {
      return Promise.reject(
        new ConfigurationError('OUTBOXER_INVALID_OPTION', `acquire for relay ${relayId}: max must be a whole number >= 0; got ${String(max)}`),
      );
    }
    return this.#database.write(() => {
      const now = this.#now();
      this.#remove(this.#sql.reap, [now], 1);
      const granted = this.#database.all(this.#sql.grant, [{ relayId, now, max }]);
      return granted
        .map((row) => ({ partition: Number(row.partition), epoch: String(row.epoch), unclean: Number(row.unclean) }))
        .sort((a, b) => a.partition - b.partition);
    });
  }

  drain(relayId: string, leases: GiveBack): Promise<number> {
    return this.#giveBack(this.#sql.drain, relayId, leases);
  }

  release(relayId: string, leases: GiveBack): Promise<number> {
    return this.#giveBack(this.#sql.release, relayId, leases);
  }

  leave(relayId: string): Promise<number> {
    return this.#database.write(() => this.#remove(this.#sql.deleteRelay, [relayId], 0));
  }

  membership(relayId: string): Promise<Membership> {
    return this.#database.read(() => inReadSnapshot(this.#database, () => readMembership(this.#database, this.#names, relayId, this.#now())));
  }

  #giveBack(sql: string, relayId: string, leases: GiveBack): Promise<number> {
    if (leases.length === 0) return Promise.resolve(0);
    return this.#database.write(() => leases.reduce((changed, l) => changed + this.#database.run(sql, [l.partition, l.epoch, relayId]), 0));
  }

  /** Deletes relays rows, then frees their partitions in the same write, so no partition names a relay without a row. */
  #report(relayId: string, trouble: string | null, now: number): void {
    if (trouble === null) this.#database.run(this.#sql.clearTrouble, [relayId]);
    else this.#database.run(this.#sql.reportTrouble, [{ relayId, trouble, now }]);
  }

  #remove(remove: string, params: readonly unknown[], unclean: 0 | 1): number {
    const removed = this.#database.all(remove, params).map((row) => String(row.relay_id));
    if (removed.length === 0) return 0;
    this.#database.run(this.#sql.forgetTrouble, []);
    return this.#database.run(this.#sql.freePartitions, [unclean, JSON.stringify(removed)]);
  }

  #now(): number {
    return Number(this.#database.get(NOW)?.now);
  }
}
