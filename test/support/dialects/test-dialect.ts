import type { InboxHarness } from '../../conformance/inbox-conformance.js';
import type { LeaseHarness } from '../../conformance/lease-harness.js';
import type { OperatorHarness } from '../../conformance/operator-conformance.js';
import type { ReaderHarness } from '../../conformance/reader-harness.js';
import type { SqlStoreHarness, StoreHarness } from '../../conformance/store-harness.js';

/**
 * One database the conformance suites run over: every harness they need, each setting up a fresh schema,
 * database or file per test. `name` is the label every test name carries, so a failure says which database.
 */
export interface TestDialect {
  readonly name: string;
  /** Statements run side by side (several connections): the suites add late commits, lock races. */
  readonly concurrent: boolean;
  readonly store: SqlStoreHarness;
  readonly gauges: StoreHarness;
  /** The count up to which the store's gauges are exact. */
  readonly gaugeExactLimit: number;
  readonly reader: ReaderHarness;
  readonly lease: LeaseHarness;
  readonly operator: OperatorHarness;
  /** Hands the inbox harness, with its own transaction type, to `use` (the inbox suite is generic over it). */
  withInbox<R>(use: <Tx>(harness: InboxHarness<Tx>) => R): R;
}
