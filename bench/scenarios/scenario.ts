import type pg from 'pg';
import type { SizeName, Sizes } from '../config.js';
import type { ContenderFactory } from '../contenders/contender.js';
import type { BrokerKind } from '../support/broker-target.js';
import type { FloorDatabaseKind } from './relay-floor-database.js';
import type { PublisherKind } from '../support/publisher-targets.js';

export type Metric = number | string | boolean | null;

/** One contender's numbers in one scenario (and broker, when it matters). */
export interface ResultRow {
  readonly contender: string;
  /** (k): the issue-21 publisher's destination (redis, mqtt, webhook). */
  readonly broker?: BrokerKind | PublisherKind;
  readonly metrics: Record<string, Metric>;
}

/** A target of the issue, judged from ratios measured in this run. `met` is null when it could not be judged. */
export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly value: number | null;
  readonly met: boolean | null;
}

/** A sanity check: the scenario ran and its numbers mean something (counts match, latencies finite, no errors). */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly settings: Record<string, Metric>;
  readonly rows: ResultRow[];
  readonly targets: Target[];
  readonly checks: Check[];
  readonly notes: string[];
  seconds?: number;
}

export interface ScenarioContext {
  readonly size: SizeName;
  readonly sizes: Sizes;
  readonly brokers: readonly BrokerKind[];
  /** `--db`: the databases of (l), PostgreSQL unless asked otherwise. */
  readonly databases: readonly FloorDatabaseKind[];
  readonly admin: pg.Client;
  /** The relay designs compared (outboxer first); the smoke test may narrow it. */
  readonly contenders: readonly ContenderFactory[];
  /** The contenders of a scenario that loops over brokers, for one broker (a smoke run may drop some). */
  contendersOn(broker: BrokerKind): readonly ContenderFactory[];
  log(message: string): void;
}

export type Scenario = (context: ScenarioContext) => Promise<ScenarioResult>;

export function newResult(id: string, title: string, settings: Record<string, Metric>): ScenarioResult {
  return { id, title, settings, rows: [], targets: [], checks: [], notes: [] };
}

export function target(name: string, goal: string, value: number | null, met: (value: number) => boolean): Target {
  return { name, goal, value, met: value === null || !Number.isFinite(value) ? null : met(value) };
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** "Ahead of X" targets: outboxer's `metric` against every other relay contender's, in one broker (or none). */
export function aheadTargets(result: ScenarioResult, metric: string, higherIsBetter: boolean, broker?: string): void {
  const rows = result.rows.filter((row) => row.broker === broker);
  const ours = rows.find((row) => row.contender === 'outboxer')?.metrics[metric];
  for (const row of rows) {
    if (row.contender.startsWith('outboxer') || row.contender.startsWith('broker ceiling')) continue;
    const theirs = row.metrics[metric];
    if (typeof ours !== 'number' || typeof theirs !== 'number') continue;
    const value = higherIsBetter ? ours / theirs : theirs / ours;
    result.targets.push(
      target(`${broker === undefined ? '' : `${broker} `}${metric}: ahead of ${row.contender}`, '> 1 (outboxer better)', round(value), (v) => v > 1),
    );
  }
}
