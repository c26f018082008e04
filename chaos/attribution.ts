import { type FaultRecord, hitsDestination } from './fault-log.js';
import type { RelaySpec } from './spec.js';

/** One relay incarnation's journal, as the checker reads it. */
export interface IncarnationRecord {
  readonly name: string;
  readonly exit: { readonly code: number | null; readonly signal: string | null; readonly t: number } | undefined;
  readonly events: readonly JournalEvent[];
}

export interface JournalEvent {
  readonly t: number;
  readonly e: string;
  readonly id?: string;
  readonly tok?: string;
  readonly ids?: readonly string[];
  readonly n?: number;
  /** The process id, on the `start` record. */
  readonly pid?: number;
}

interface Send {
  readonly incarnation: IncarnationRecord;
  readonly tok: string | undefined;
  readonly t: number;
  /** When the attempt's outcome became known (nack time, mark time, or the end of the process). */
  readonly until: number;
  readonly marked: boolean;
}

const SLACK_MS = 500;

/**
 * Every send of every id, each with whether its claim's mark took it (a full, unfenced mark). A row the store skipped
 * (`skip`: locked by another session, nothing written) has no mark: its attempt stays open until a later full mark
 * of that id (under any read's token: the row, still pending, is read again) or the end of the process, since the
 * relay keeps its outcome in memory and loses it only with its partition.
 */
export function indexSends(incarnations: readonly IncarnationRecord[]): Map<string, Send[]> {
  const sends = new Map<string, Send[]>();
  for (const incarnation of incarnations) {
    const marks = new Map<string, { t: number; full: boolean }>();
    const nacks = new Map<string, number>();
    const skips = new Map<string, number>();
    /** Per id, when a full mark wrote it, under any token (a skipped row read again moves to the new read's token). */
    const written = new Map<string, number[]>();
    for (const event of incarnation.events) {
      if (event.e === 'mark' && event.tok !== undefined) {
        const full = event.n === event.ids?.length;
        for (const id of event.ids ?? []) {
          marks.set(`${event.tok}/${id}`, { t: event.t, full });
          if (!full) continue;
          const times = written.get(id);
          if (times === undefined) written.set(id, [event.t]);
          else times.push(event.t);
        }
      }
      if (event.e === 'skip' && event.tok !== undefined) for (const id of event.ids ?? []) skips.set(`${event.tok}/${id}`, event.t);
      if (event.e === 'nack' && event.id !== undefined) nacks.set(`${event.tok}/${event.id}`, event.t);
    }
    const end = incarnation.exit?.t ?? Number.MAX_SAFE_INTEGER;
    for (const event of incarnation.events) {
      if (event.e !== 'send' || event.id === undefined) continue;
      const key = `${event.tok}/${event.id}`;
      const mark = marks.get(key);
      const skippedAt = skips.get(key);
      // a skipped row's attempt ends when a later completion writes it, whichever read's token that names
      const writtenAfterSkip = skippedAt === undefined ? undefined : written.get(event.id)?.find((t) => t >= skippedAt);
      const until = nacks.get(key) ?? mark?.t ?? writtenAfterSkip ?? end;
      const send: Send = { incarnation, tok: event.tok, t: event.t, until, marked: mark?.full === true };
      const list = sends.get(event.id) ?? [];
      list.push(send);
      sends.set(event.id, list);
    }
  }
  return sends;
}

/**
 * The fault that explains a send that did not end in a mark: a fault of its own process (kill, pause, its
 * own database cut-off) whose window overlaps the attempt or the lease before it, or a network, broker or
 * database fault of every relay whose window overlaps the attempt. Undefined: no fault explains it. A
 * fault's whole window counts, not only its start: a zombie resumed after 2 leases still sends what it had
 * claimed before the pause, and a relay cut off from the database publishes claims it can no longer mark.
 */
export function causeOf(send: Send, all: readonly FaultRecord[], leaseMs: number, destination = 'default'): FaultRecord | undefined {
  // with fan-out, a fault of one destination (its broker cut) explains that destination's sends only
  const faults = all.filter((f) => hitsDestination(f, destination));
  const own = faults.filter((f) => f.target === send.incarnation.name && f.end >= send.t - leaseMs - SLACK_MS);
  const ownCause = own.find((f) => f.start <= send.until + SLACK_MS);
  if (ownCause !== undefined) return ownCause;
  if (send.incarnation.exit?.signal === 'SIGKILL') {
    const selfKill = faults.find((f) => f.target === send.incarnation.name && f.kind.startsWith('kill-point'));
    if (selfKill !== undefined) return selfKill;
  }
  return faults.find((f) => f.target === undefined && f.keys === undefined && f.start <= send.until + SLACK_MS && f.end >= send.t - leaseMs - SLACK_MS);
}

export interface DuplicateAttribution {
  readonly copies: number;
  readonly attributed: number;
  readonly unattributed: { readonly id: string; readonly copies: number }[];
  /** Copies per fault id. */
  readonly byFault: Map<number, number>;
}

/**
 * Each copy beyond the first must be matched by an unmarked send that a fault explains, and the fault must allow
 * copies. `destinationOf`: the destination of a row (fan-out), `default` when not given.
 */
export function attributeDuplicates(
  copiesById: ReadonlyMap<string, number>,
  sends: ReadonlyMap<string, Send[]>,
  faults: readonly FaultRecord[],
  leaseMs: number,
  destinationOf: (id: string) => string = () => 'default',
): DuplicateAttribution {
  const byFault = new Map<number, number>();
  const unattributed: { id: string; copies: number }[] = [];
  let copies = 0;
  let attributed = 0;
  for (const [id, extra] of copiesById) {
    if (extra <= 0) continue;
    copies += extra;
    const unmarked = (sends.get(id) ?? []).filter((s) => !s.marked);
    let explained = 0;
    for (const send of unmarked) {
      if (explained >= extra) break;
      const cause = causeOf(send, faults, leaseMs, destinationOf(id));
      if (!cause?.mayDuplicate) continue;
      explained++;
      byFault.set(cause.id, (byFault.get(cause.id) ?? 0) + 1);
    }
    attributed += explained;
    if (explained < extra) unattributed.push({ id, copies: extra - explained });
  }
  return { copies, attributed, unattributed, byFault };
}

/**
 * How many copies one fault may explain: what the relays it hit could hold leased at once, a claim of
 * `batchSize` per lane (or, if larger, `maxInFlight` publishes) per relay. A fault of one process hits one
 * relay; a network, broker or database fault of every relay hits `count`. Why the bound holds:
 * - a kill (random, named point, or a relay leaving by SIGKILL): its successor publishes again what it
 *   had claimed and not marked;
 * - a pause past the lease (zombie): on resume it sends what it had claimed and not yet sent, while a
 *   survivor has taken those rows over; its marks are fenced and it can claim nothing it did not hold;
 * - one relay cut off from the database: it publishes what it had claimed but cannot mark it, a survivor
 *   takes the rows over after the lease, and the cut-off relay claims nothing until it is back;
 * - a graceful stop (SIGTERM, a relay leaving) promises none: `mayDuplicate` is false, it explains nothing.
 */
export function duplicateBudget(fault: FaultRecord, relay: Pick<RelaySpec, 'batchSize' | 'lanes' | 'maxInFlight' | 'count'>): number {
  const held = Math.max(relay.batchSize * relay.lanes, relay.maxInFlight);
  return fault.mayDuplicate ? held * (fault.target === undefined ? relay.count : 1) : 0;
}
