import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../../../core/errors.js';
import type { Membership, PartitionLease, RelayLeases, RelayReport } from '../../../core/ports.js';
import type { MysqlDatabase } from '../database.js';
import { MYSQL_NOW } from '../migrations.js';
import type { MysqlTableNames } from '../table-names.js';
import { drainPartitions, releasePartitions } from './give-back-partitions.js';
import { grantPartitions } from './grant-partitions.js';
import { readCommitted } from '../read-committed.js';
import { readMembership } from './read-membership.js';
import { reapRelays, removeRelays } from './reap-relays.js';
import { writeTrouble } from './relay-trouble.js';
import { checkJoin, troubleOf } from '../../shared/join-checks.js';

/**
 * The partition leases of one outbox table on MariaDB or MySQL; reached as `store.leases`. Every time is the
 * database's (`UTC_TIMESTAMP(6)`); relay ids are fresh UUIDs, never reused.
 */
export class MysqlRelayLeases implements RelayLeases {
  readonly #database: MysqlDatabase;
  readonly #names: MysqlTableNames;

  constructor(database: MysqlDatabase, names: MysqlTableNames) {
    this.#database = database;
    this.#names = names;
  }

  async join(relay: { readonly name: string; readonly leaseMs: number } & RelayReport): Promise<Membership> {
    checkJoin(relay);
    const relayId = randomUUID();
    const trouble = troubleOf(relay);
    await this.#database.query(
      `INSERT INTO ${this.#names.relays} (relay_id, name, lease_ms, expires_at)
        VALUES (?, ?, ?, TIMESTAMPADD(MICROSECOND, ? * 1000, ${MYSQL_NOW}))`,
      [relayId, relay.name, relay.leaseMs, relay.leaseMs],
    );
    await writeTrouble(this.#database, this.#names, relayId, trouble);
    return this.membership(relayId);
  }

  /**
   * Extends my lease only while it still runs by the clock of the update itself: a reap that deleted my row first
   * leaves nothing to update, and one that comes second re-checks my new expiry. My trouble is written after a
   * beat that counted, and the membership is read after it.
   */
  async heartbeat(relayId: string, options: { readonly leaving?: boolean } & RelayReport = {}): Promise<Membership> {
    const trouble = troubleOf(options);
    const beat = await this.#database.query(
      `UPDATE ${this.#names.relays} SET heartbeat_at = ${MYSQL_NOW},
        expires_at = TIMESTAMPADD(MICROSECOND, lease_ms * 1000, ${MYSQL_NOW}), leaving = leaving OR ?
        WHERE relay_id = ? AND expires_at > ${MYSQL_NOW}`,
      [options.leaving === true, relayId],
    );
    if (beat.affectedRows === 1) await writeTrouble(this.#database, this.#names, relayId, trouble);
    const membership = await this.membership(relayId);
    return { ...membership, alive: beat.affectedRows === 1 && membership.alive };
  }

  async acquire(relayId: string, max: number): Promise<readonly PartitionLease[]> {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `acquire for relay ${relayId}: max must be a whole number >= 0; got ${String(max)}`);
    }
    return readCommitted(this.#database, async (tx) => {
      await reapRelays(tx, this.#names);
      return grantPartitions(tx, this.#names, relayId, max);
    });
  }

  drain(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number> {
    return drainPartitions(this.#database, this.#names, relayId, leases);
  }

  release(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): Promise<number> {
    return releasePartitions(this.#database, this.#names, relayId, leases);
  }

  leave(relayId: string): Promise<number> {
    return readCommitted(this.#database, (tx) => removeRelays(tx, this.#names, [relayId], 0));
  }

  membership(relayId: string): Promise<Membership> {
    return readMembership(this.#database, this.#names, relayId);
  }
}
