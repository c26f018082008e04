import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../../../core/errors.js';
import type { HeldPartition, LiveRelay, Membership, PartitionLease, RelayLeases, RelayReport } from '../../../core/ports.js';
import { checkJoin, troubleOf } from '../../shared/join-checks.js';
import { notMigrated } from '../connection-errors.js';
import { affectedRows, type PgDatabase, type QueryResultLike, type SqlExecutor } from '../database.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';
import { drainPartitions, releasePartitions } from './give-back-partitions.js';
import { grantPartitions } from './grant-partitions.js';
import { joinRelay } from './join-relay.js';
import { leaseTables, type LeaseStatement, type LeaseTables } from './lease-tables.js';
import { heartbeat, readMembership } from './membership.js';
import { deleteRelay, freePartitions, reapRelays } from './reap-relays.js';

interface MembershipRow {
  alive: boolean;
  relays: LiveRelay[];
  owned: { partition: number; epoch: string; state: HeldPartition['state']; unclean: number }[];
  grantable: number;
  partition_count: number;
  generation: number;
  resize_to: number | null;
  grants_open: boolean;
}

/** The partition leases of one outbox table on PostgreSQL or PGlite; reached as `store.leases`. */
export class PostgresRelayLeases implements RelayLeases {
  readonly #database: PgDatabase;
  readonly #name: TableName;
  readonly #tables: LeaseTables;
  readonly #prepare: boolean;
  readonly #named = new Map<object, NamedStatement>();

  constructor(database: PgDatabase, name: TableName, preparedStatements: boolean) {
    this.#database = database;
    this.#name = name;
    this.#tables = leaseTables(name);
    this.#prepare = preparedStatements;
  }

  async join(relay: { readonly name: string; readonly leaseMs: number } & RelayReport): Promise<Membership> {
    checkJoin(relay);
    const relayId = randomUUID();
    await this.#run(this.#database, joinRelay, relayId, relay.name, relay.leaseMs, troubleOf(relay));
    return this.membership(relayId);
  }

  async heartbeat(relayId: string, options: { readonly leaving?: boolean } & RelayReport = {}): Promise<Membership> {
    return this.#membership(relayId, await this.#run(this.#database, heartbeat, relayId, options.leaving === true, troubleOf(options)));
  }

  async acquire(relayId: string, max: number): Promise<readonly PartitionLease[]> {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `acquire for relay ${relayId}: max must be a whole number >= 0; got ${String(max)}`);
    }
    return this.#database.transaction(async (tx) => {
      await this.#remove(tx, reapRelays, [], 1);
      const granted = await this.#run(tx, grantPartitions, relayId, max);
      return (granted.rows as PartitionLease[]).map((row) => ({ partition: row.partition, epoch: row.epoch, unclean: row.unclean }));
    });
  }

  async drain(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number> {
    if (leases.length === 0) return 0;
    return affectedRows(
      await this.#run(
        this.#database,
        drainPartitions,
        relayId,
        leases.map((l) => l.partition),
        leases.map((l) => l.epoch),
      ),
    );
  }

  async release(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number> {
    if (leases.length === 0) return 0;
    return affectedRows(
      await this.#run(
        this.#database,
        releasePartitions,
        relayId,
        leases.map((l) => l.partition),
        leases.map((l) => l.epoch),
      ),
    );
  }

  leave(relayId: string): Promise<number> {
    return this.#database.transaction((tx) => this.#remove(tx, deleteRelay, [relayId], 0));
  }

  async membership(relayId: string): Promise<Membership> {
    return this.#membership(relayId, await this.#run(this.#database, readMembership, relayId));
  }

  /** Deletes relays rows, then frees their partitions in the same transaction (see `freePartitions`). */
  async #remove<A extends readonly unknown[]>(tx: SqlExecutor, remove: LeaseStatement<A>, args: A, unclean: 0 | 1): Promise<number> {
    const removed = (await this.#run(tx, remove, ...args)).rows as { relay_id: string }[];
    if (removed.length === 0) return 0;
    return affectedRows(
      await this.#run(
        tx,
        freePartitions,
        removed.map((row) => row.relay_id),
        unclean,
      ),
    );
  }

  #membership(relayId: string, result: QueryResultLike): Membership {
    const row = result.rows[0] as MembershipRow | undefined;
    if (row === undefined) throw notMigrated(this.#name, 'its partitioning row is missing');
    return toMembership(relayId, row);
  }

  #run<A extends readonly unknown[]>(executor: SqlExecutor, statement: LeaseStatement<A>, ...args: A): Promise<QueryResultLike> {
    let named = this.#named.get(statement);
    if (named === undefined) {
      named = namedStatement(statement.sql(this.#tables));
      this.#named.set(statement, named);
    }
    return runStatement(executor, named, statement.params(...args), this.#prepare);
  }
}

function toMembership(relayId: string, row: MembershipRow): Membership {
  return {
    relayId,
    alive: row.alive,
    relays: row.relays.map((r) => ({
      id: r.id,
      name: r.name,
      leaving: r.leaving,
      held: Number(r.held),
      expiresInMs: Number(r.expiresInMs),
      trouble: r.trouble ?? null,
    })),
    owned: row.owned.map((p) => ({ partition: p.partition, epoch: p.epoch, state: p.state, unclean: p.unclean })),
    grantable: Number(row.grantable),
    config: { partitionCount: row.partition_count, generation: row.generation, resizeTo: row.resize_to, grantsOpen: row.grants_open },
  };
}
