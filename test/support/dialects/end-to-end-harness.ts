import type { DeadMessage } from '../../../src/core/message.js';
import type { Relay } from '../../../src/core/relay.js';
import type { RelayOptionsInput } from '../../../src/core/relay-options.js';
import type { BrokerRig } from '../broker-rigs.js';
import type { WriteTransaction } from '../keyed-writers.js';
import type { ChildOutbox, RelayChildEntry } from '../relay-child.js';

/** A broker the shared end-to-end test runs a database's outbox against. */
export interface EndToEndBroker {
  readonly name: string;
  readonly makeRig: () => Promise<BrokerRig>;
  /** The wire probe reads this broker as our consumers do (RabbitMQ, NATS): the plain-SQL wire test runs on it. */
  readonly probed: boolean;
}

/** A fresh, migrated outbox of one database, with the writers and views the end-to-end test drives it by. */
export interface EndToEndEnvironment {
  /** What a relay child process opens: a URL or a file path, and PostgreSQL's schema. */
  readonly childOutbox: ChildOutbox;
  /** Writers, each in its own way of holding a transaction (see the dialect). */
  readonly write: WriteTransaction;
  /** An in-process relay on this outbox, with the children's timing overridden by `options`. */
  relay(publisher: ReturnType<BrokerRig['publisher']>, options?: RelayOptionsInput): Relay;
  /** Partitions held per relay id. */
  holdings(): Promise<Map<string, number>>;
  /** Messages parked as dead, with why. */
  dead(): Promise<readonly DeadMessage[]>;
  /** Rows left in the outbox, in any state. */
  left(): Promise<number>;
  /** Inserts one row by plain SQL, as a producer outside the library does, and returns its id. */
  insertPlain(row: { readonly topic: string; readonly type: string; readonly key: string; readonly payload: unknown }): Promise<string>;
  cleanup(): Promise<void>;
}

/** One database under the shared end-to-end test: relays run as child processes of `child`'s entry. */
export interface EndToEndHarness {
  /** The label the test names carry: `<label> outbox -> <broker> end to end`. */
  readonly label: string;
  readonly child: RelayChildEntry;
  readonly brokers: readonly EndToEndBroker[];
  setup(): Promise<EndToEndEnvironment>;
}

/** Thrown inside a transaction that must roll back, carrying what the enqueue returned. */
class RolledBack extends Error {
  constructor(readonly ids: readonly string[]) {
    super('rolled back by the test');
  }
}

type Ids = readonly string[];

/**
 * Enqueues inside a transaction that `inTransaction` runs (commits when the work returns, rolls back when it throws),
 * rolled back when `rollback`; returns the ids the enqueue returned either way.
 */
export async function enqueueInTransaction<Tx>(
  inTransaction: (work: (tx: Tx) => Promise<Ids>) => Promise<Ids>,
  enqueue: (tx: Tx) => Promise<Ids>,
  rollback: boolean,
): Promise<Ids> {
  try {
    return await inTransaction(async (tx) => {
      const ids = await enqueue(tx);
      if (rollback) throw new RolledBack(ids);
      return ids;
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.ids;
    throw error;
  }
}
