import type { NewOutboxMessage } from '../../src/core/message.js';
import type { OutboxOperator, PartitionReader, RelayLeases } from '../../src/core/ports.js';
import type { LeaseControls } from './lease-harness.js';
import type { PlainRow } from './store-harness.js';

/**
 * What the reader conformance suite needs beyond the ports: plain-SQL producers, a look at the rows' versions,
 * and, where statements run side by side, transactions and locks held open. Each database implements these once,
 * so the suite itself holds no SQL. All times are on the database clock.
 */
export interface ReaderControls {
  /** Inserts rows as a plain-SQL producer does; `dueInSeconds` writes the documented delay (`due_at`). */
  insertPlain(rows: readonly (PlainRow & { readonly dueInSeconds?: number })[]): Promise<void>;
  /** A fingerprint of every row version of the outbox: it changes when any row is written, deleted or locked. */
  rowVersions(): Promise<string>;
  /** Every scheduled pending row (backoff, hold, delay) is due now. */
  makeDueNow(): Promise<void>;
  /** Where statements run side by side: enqueues through the writer in a transaction left open until `end`. */
  openEnqueue?(messages: readonly NewOutboxMessage[]): Promise<OpenTransaction>;
  /**
   * Where statements run side by side: locks one message's row in a transaction of its own until `end`.
   * `waiting` counts the sessions blocked behind it, directly or behind one that is.
   */
  lockMessage?(id: string): Promise<HeldLock>;
}

export interface OpenTransaction {
  end(options: { readonly commit: boolean }): Promise<void>;
}

export interface HeldLock {
  waiting(): Promise<number>;
  end(): Promise<void>;
}

/** One database under the reader conformance suite, freshly migrated (as after `migrate`). */
export interface ReaderEnvironment {
  readonly reader: PartitionReader;
  readonly leases: RelayLeases;
  readonly operator: OutboxOperator;
  /** Enqueues through the writer port, in a transaction of its own. */
  enqueue(messages: readonly NewOutboxMessage[]): Promise<void>;
  readonly controls: ReaderControls;
  readonly leaseControls: LeaseControls;
  cleanup(): Promise<void>;
}

export interface ReaderHarness {
  readonly name: string;
  /** Statements run side by side (several connections): the suite adds late commits and lock races. */
  readonly concurrent: boolean;
  setup(options?: { readonly retainPublishedMs?: number }): Promise<ReaderEnvironment>;
}
