import { OutboxerError } from '../../../core/errors.js';
import type { EngineRelays, EngineState, PartitionEngine } from '../../../core/ports/partition-engine.js';
import type { RelayGroup as StoreRelayGroup } from '../../../core/ports.js';
import { humanDuration, printable, renderTable } from '../format.js';

/** The engine block of `outboxer status --json`: the partitions and the relays; null when the table lacks migrations. */
export interface EngineStatusJson {
  readonly partitionCount: number;
  readonly generation: number;
  /** The count a waiting resize moves to (grants closed), or null. */
  readonly resizeTo: number | null;
  readonly relays: readonly {
    readonly id: string;
    readonly name: string;
    readonly leaving: boolean;
    readonly partitions: number;
    readonly leaseLeftMs: number;
    /** Why it cannot publish (its broker unreachable) and since when (ISO), or null. */
    readonly trouble: { readonly reason: string; readonly since: string } | null;
  }[];
  readonly unownedPartitions: number;
  /** Of the unowned ones, those still named by a relay whose lease ran out. */
  readonly lapsedPartitions: number;
}

export interface EngineStatus {
  readonly state: EngineState;
  readonly group: EngineRelays;
}

/** Reads the partitioning and the relay group without writing; undefined when a migration is missing. */
export async function readEngineStatus(engine: PartitionEngine): Promise<EngineStatus | undefined> {
  let state: EngineState;
  try {
    state = await engine.readState();
  } catch (error) {
    if (error instanceof OutboxerError && error.code === 'OUTBOXER_NOT_MIGRATED') return undefined;
    throw error;
  }
  return { state, group: await engine.readRelays() };
}

export function engineStatusJson(status: EngineStatus | undefined): EngineStatusJson | null {
  if (status === undefined) return null;
  const { state, group } = status;
  return {
    partitionCount: state.partitionCount,
    generation: state.generation,
    resizeTo: state.resizeTo,
    relays: group.relays.map(({ id, name, leaving, held, leaseLeftMs, trouble }) => ({
      id,
      name,
      leaving,
      partitions: held,
      leaseLeftMs,
      trouble: troubleJson(trouble),
    })),
    unownedPartitions: group.unowned,
    lapsedPartitions: group.lapsed,
  };
}

/** The engine block of `outboxer status`, after the counts: the partitioning, the live relays, the unowned partitions. */
export function engineStatusText(status: EngineStatus | undefined, now = new Date()): string {
  if (status === undefined) return "engine: unknown: the table lacks migrations; run 'outboxer migrate'\n";
  const { state, group } = status;
  const lines = [`engine v2: ${state.partitionCount} partitions, generation ${state.generation}`];
  if (state.resizeTo !== null) {
    lines.push(
      `resize: to ${state.resizeTo} partitions, waiting (grants closed): 'outboxer migrate --partitions ${state.resizeTo}' finishes it, --cancel-resize abandons it`,
    );
  }
  let text = `${lines.join('\n')}\n`;
  const rows = group.relays.map((relay) => [
    printable(relay.name, 60),
    relay.id.slice(0, 8),
    String(relay.held),
    `${(relay.leaseLeftMs / 1000).toFixed(1)} s`,
    relayState(relay, now),
  ]);
  text += rows.length === 0 ? 'live relays: none\n' : renderTable(['relay', 'id', 'partitions', 'lease left', 'state'], rows, new Set([2, 3]));
  const lapsed = group.lapsed === 0 ? '' : ` (${group.lapsed} still named by a relay whose lease ran out)`;
  return `${text}unowned partitions: ${group.unowned}${lapsed}\n`;
}

/** The engine block of `status --json` for MariaDB/MySQL and SQLite tables: a fixed count, no resize. */
export function groupStatusJson(group: StoreRelayGroup): EngineStatusJson {
  return {
    partitionCount: group.partitionCount,
    generation: 1,
    resizeTo: null,
    relays: group.relays.map(({ id, name, leaving, partitions, expiresInMs, trouble }) => ({
      id,
      name,
      leaving,
      partitions: partitions.length,
      leaseLeftMs: expiresInMs,
      trouble: troubleJson(trouble),
    })),
    unownedPartitions: group.unowned.length,
    lapsedPartitions: 0,
  };
}

/** The engine block of `outboxer status` for MariaDB/MySQL and SQLite tables. */
export function groupStatusText(group: StoreRelayGroup): string {
  const now = new Date();
  const rows = group.relays.map((relay) => [
    printable(relay.name, 60),
    relay.id.slice(0, 8),
    String(relay.partitions.length),
    `${(relay.expiresInMs / 1000).toFixed(1)} s`,
    relayState(relay, now),
  ]);
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
