import { OutboxerError } from '../../../core/errors.js';
import type { PgDatabase } from '../../../stores/postgres/database.js';
import { type EngineState, readEngineState } from '../../../stores/postgres/engine/engine-state.js';
import { readRelayGroup, type RelayGroup } from '../../../stores/postgres/engine/relay-group.js';
import type { TableName } from '../../../stores/postgres/sql.js';
import type { RelayGroup as StoreRelayGroup } from '../../../core/ports.js';
import { humanDuration, printable, renderTable } from '../format.js';

/** The engine block of `outboxer status --json`; null when the table lacks the migrations engine v2 needs. */
export interface EngineStatusJson {
  readonly engine: 'v1' | 'v2';
  /** A switch to v2 committed its fence and is still scanning: no grant yet. */
  readonly switching: boolean;
  readonly partitionCount: number;
  readonly generation: number;
  /** The count a waiting resize moves to (grants closed), or null. */
  readonly resizeTo: number | null;
  /** Under v2, when grants open (the last v1 lease at the switch); null under v1 and while switching. */
  readonly fenceUntil: string | null;
  readonly lastV1ClaimFencedAt: string | null;
  readonly relays: readonly {
    readonly id: string; readonly name: string; readonly leaving: boolean; readonly partitions: number; readonly leaseLeftMs: number;
    /** Why it cannot publish (its broker unreachable) and since when (ISO), or null. */
    readonly trouble: { readonly reason: string; readonly since: string } | null;
  }[];
  readonly unownedPartitions: number;
  /** Of the unowned ones, those still named by a relay whose lease ran out. */
  readonly lapsedPartitions: number;
}

export interface EngineStatus {
  readonly state: EngineState;
  readonly group: RelayGroup;
}

/** Reads the engine state and the relay group without writing; undefined when migration 8 is missing. */
export async function readEngineStatus(database: PgDatabase, name: TableName): Promise<EngineStatus | undefined> {
  let state: EngineState;
  try {
    state = await readEngineState(database, name);
  } catch (error) {
    if (error instanceof OutboxerError && error.code === 'OUTBOXER_NOT_MIGRATED') return undefined;
    throw error;
  }
  return { state, group: await readRelayGroup(database, name) };
}

export function engineStatusJson(status: EngineStatus | undefined): EngineStatusJson | null {
  if (status === undefined) return null;
  const { state, group } = status;
  return {
    engine: state.engine,
    switching: state.switching,
    partitionCount: state.partitionCount,
    generation: state.generation,
    resizeTo: state.resizeTo,
    fenceUntil: state.fenceUntil?.toISOString() ?? null,
    lastV1ClaimFencedAt: state.lastV1ClaimFencedAt?.toISOString() ?? null,
    relays: group.relays.map(({ id, name, leaving, held, leaseLeftMs, trouble }) => ({ id, name, leaving, partitions: held, leaseLeftMs, trouble: troubleJson(trouble) })),
    unownedPartitions: group.unowned,
    lapsedPartitions: group.lapsed,
  };
}

const ago = (at: Date, now: Date) => `${at.toISOString()} (${humanDuration(Math.max(0, (now.getTime() - at.getTime()) / 1000))} ago)`;

/**
 * Whether engine v1 concerns this table: it runs under v1, it came from v1 (a switch, its fence or a fenced v1
 * claim), or rows are leased by a v1 relay now (`v1Leases`). A table under v2 from the start shows nothing of v1.
 */
export function v1Relevant(status: EngineStatus | undefined, v1Leases: boolean): boolean {
  // a table without the engine v2 migrations runs v1
  if (v1Leases || status === undefined) return true;
  const { state } = status;
  return state.engine === 'v1' || state.switching || state.fenceUntil !== null || state.lastV1ClaimFencedAt !== null;
}

/** The engine block of `outboxer status`, after the counts; v1 lines only where `v1Relevant`. */
export function engineStatusText(status: EngineStatus | undefined, now = new Date(), v1Leases = false): string {
  if (status === undefined) return "engine: unknown: the table lacks the engine v2 migrations; run 'outboxer migrate'\n";
  const { state, group } = status;
  const lines = [`engine ${state.engine}: ${state.partitionCount} partitions, generation ${state.generation}`];
  if (state.resizeTo !== null) {
    lines.push(`resize: to ${state.resizeTo} partitions, waiting (grants closed): 'outboxer migrate --partitions ${state.resizeTo}' finishes it, --cancel-resize abandons it`);
  }
  if (state.engine === 'v2') {
    if (state.switching) lines.push('fence: the switch is still scanning pending rows; no partition is granted yet');
    else if (state.fenceUntil !== null) lines.push(`fence: v2 grants ${state.fenceUntil > now ? 'open at' : 'open since'} ${state.fenceUntil.toISOString()}`);
  }
  // under v2 for a table that came from v1 (or has v1 leases now); under v1 only after a switch back: the time it kept
  if ((state.engine === 'v2' && v1Relevant(status, v1Leases)) || state.lastV1ClaimFencedAt !== null) {
    lines.push(`last v1 claim fenced: ${state.lastV1ClaimFencedAt === null ? 'never' : ago(state.lastV1ClaimFencedAt, now)}`);
  }
  let text = `${lines.join('\n')}\n`;
  if (state.engine === 'v2') {
    const rows = group.relays.map((relay) => [printable(relay.name, 60), relay.id.slice(0, 8), String(relay.held), `${(relay.leaseLeftMs / 1000).toFixed(1)} s`, relayState(relay, now)]);
    text += rows.length === 0 ? 'live relays: none\n' : renderTable(['relay', 'id', 'partitions', 'lease left', 'state'], rows, new Set([2, 3]));
    const lapsed = group.lapsed === 0 ? '' : ` (${group.lapsed} still named by a relay whose lease ran out)`;
    text += `unowned partitions: ${group.unowned}${lapsed}\n`;
  }
  return text;
}

/** The engine block of `status --json` for MariaDB/MySQL and SQLite tables: engine v2 at a fixed count, no switch or resize. */
export function groupStatusJson(group: StoreRelayGroup): EngineStatusJson {
  return {
    engine: 'v2',
    switching: false,
    partitionCount: group.partitionCount,
    generation: 1,
    resizeTo: null,
    fenceUntil: null,
    lastV1ClaimFencedAt: null,
    relays: group.relays.map(({ id, name, leaving, partitions, expiresInMs, trouble }) => ({ id, name, leaving, partitions: partitions.length, leaseLeftMs: expiresInMs, trouble: troubleJson(trouble) })),
    unownedPartitions: group.unowned.length,
    lapsedPartitions: 0,
  };
}

/** The engine block of `outboxer status` for MariaDB/MySQL and SQLite tables. */
export function groupStatusText(group: StoreRelayGroup): string {
  const now = new Date();
  const rows = group.relays.map((relay) => [printable(relay.name, 60), relay.id.slice(0, 8), String(relay.partitions.length), `${(relay.expiresInMs / 1000).toFixed(1)} s`, relayState(relay, now)]);
  const relays = rows.length === 0 ? 'live relays: none\n' : renderTable(['relay', 'id', 'partitions', 'lease left', 'state'], rows, new Set([2, 3]));
  return `engine v2: ${group.partitionCount} partitions\n${relays}unowned partitions: ${group.unowned.length}\n`;
}

type Trouble = { readonly reason: string; readonly since: Date } | null;

function troubleJson(trouble: Trouble): { reason: string; since: string } | null {
  return trouble === null ? null : { reason: trouble.reason, since: trouble.since.toISOString() };
}

/** A relay's state for the table: broker trouble (how long, why), leaving, or active. */
function relayState(relay: { readonly leaving: boolean; readonly trouble: Trouble }, now: Date): string {
  if (relay.trouble !== null) {
    const lasting = humanDuration(Math.max(0, (now.getTime() - relay.trouble.since.getTime()) / 1000));
    return `broker trouble for ${lasting}: ${printable(relay.trouble.reason, 120)}`;
  }
  return relay.leaving ? 'leaving' : 'active';
}
