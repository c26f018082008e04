import { LEASE_MS, type ModelFlags } from './model-flags.js';

export interface OutboxRow {
  readonly seq: number;
  readonly key: string;
  readonly partition: number;
}

export interface Grant {
  readonly partition: number;
  readonly epoch: number;
  readonly draining: boolean;
}

/** What every statement returns besides its own result, as the heartbeat and the reads do in the design. */
export interface View {
  /** Orders replies: a relay ignores a view older than one it has already applied. */
  readonly version: number;
  readonly relays: readonly { readonly id: string; readonly held: number }[];
  readonly own: readonly Grant[];
  readonly grantable: number;
  /** Database milliseconds until the earliest live peer expires; the relay measures it on its own clock. */
  readonly nextPeerExpiryIn: number | null;
}

/** A fenced write as the database executed it: `superseded` if the writer's grant had ended by then. */
export interface FencedWrite {
  readonly kind: 'complete' | 'drain' | 'release';
  readonly relay: string;
  readonly partition: number;
  readonly superseded: boolean;
  readonly matched: number;
}

interface RelayRow {
  expiresAt: number;
  leaving: boolean;
}

interface PartitionRow {
  owner: string | null;
  draining: boolean;
  epoch: number;
  unclean: number;
}

/**
 * The database side of the lease protocol, one method per statement, each atomic (the row locks of the real
 * statements serialize exactly these). `now` is the database clock; the world advances it.
 */
export class LeaseDatabase {
  now = 0;
  private version = 0;
  private nextSeq = 1;
  readonly relays = new Map<string, RelayRow>();
  readonly partitions: PartitionRow[];
  readonly pending = new Map<number, OutboxRow>();
  readonly writes: FencedWrite[] = [];
  /** Heartbeats that extended a row already past its expiry (the design says this never happens). */
  revivals = 0;

  constructor(
    readonly partitionCount: number,
    private readonly flags: ModelFlags,
  ) {
    this.partitions = Array.from({ length: partitionCount }, () => ({ owner: null, draining: false, epoch: 0, unclean: 0 }));
  }

  get inserted(): number {
    return this.nextSeq - 1;
  }

  insert(key: string, partition: number): OutboxRow {
    const row = { seq: this.nextSeq++, key, partition };
    this.pending.set(row.seq, row);
    return row;
  }

  join(relay: string): View {
    this.relays.set(relay, { expiresAt: this.now + LEASE_MS, leaving: false });
    return this.view(relay);
  }

  heartbeat(relay: string, leaving: boolean): { alive: boolean; view: View } {
    const row = this.relays.get(relay);
    const expired = row === undefined || row.expiresAt <= this.now;
    if (expired && !this.flags.heartbeatRevives) return { alive: false, view: this.view(relay) };
    if (expired) this.revivals += 1;
    this.relays.set(relay, { expiresAt: this.now + LEASE_MS, leaving });
    return { alive: true, view: this.view(relay) };
  }

  /** Reap, then grant up to `count` partitions that are free or whose owner has no row, lowest first. */
  acquire(relay: string, count: number): { granted: readonly Grant[]; view: View } {
    const reapAt = this.flags.reapBeforeExpiry ? this.now + LEASE_MS / 2 : this.now;
    for (const [id, row] of this.relays) if (row.expiresAt <= reapAt) this.relays.delete(id);
    const me = this.relays.get(relay);
    const granted: Grant[] = [];
    if (me !== undefined && me.expiresAt > this.now && !me.leaving) {
      this.partitions.forEach((p, partition) => {
        if (granted.length >= count) return;
        if (p.owner !== null && this.relays.has(p.owner)) return;
        if (p.owner !== null) p.unclean += 1;
        p.owner = relay;
        p.draining = false;
        p.epoch += 1;
        granted.push({ partition, epoch: p.epoch, draining: false });
      });
    }
    return { granted, view: this.view(relay) };
  }

  drain(relay: string, partition: number, epoch: number): void {
    const p = this.fenced('drain', relay, partition, epoch, () => 1);
    if (p) p.draining = true;
  }

  release(relay: string, partition: number, epoch: number): void {
    const p = this.fenced('release', relay, partition, epoch, () => 1);
    if (p) {
      p.owner = null;
      p.draining = false;
    }
  }

  /** Deletes published rows under a `FOR SHARE` lock of the partition row with `owner = me AND epoch = e`. */
  complete(relay: string, partition: number, epoch: number, seqs: readonly number[]): void {
    const remove = (): number => seqs.filter((seq) => this.pending.delete(seq)).length;
    if (this.flags.noEpochGuard) {
      const row = this.partitions[partition];
      const superseded = row === undefined || row.owner !== relay || row.epoch !== epoch;
      this.writes.push({ kind: 'complete', relay, partition, superseded, matched: remove() });
      return;
    }
    this.fenced('complete', relay, partition, epoch, remove);
  }

  leave(relay: string): void {
    this.relays.delete(relay);
  }

  /** Pending rows of each asked partition above its position, in seq order, at most `take` each; no writes. */
  read(relay: string, asks: readonly { partition: number; position: number }[], take: number): { rows: Map<number, OutboxRow[]>; view: View } {
    const rows = new Map<number, OutboxRow[]>();
    for (const ask of asks) rows.set(ask.partition, []);
    for (const row of this.pending.values()) {
      const list = rows.get(row.partition);
      const ask = asks.find((a) => a.partition === row.partition);
      if (list !== undefined && ask !== undefined && row.seq > ask.position && list.length < take) list.push(row);
    }
    return { rows, view: this.view(relay) };
  }

  private fenced(kind: FencedWrite['kind'], relay: string, partition: number, epoch: number, write: () => number): PartitionRow | null {
    const p = this.partitions[partition];
    const current = p !== undefined && p.owner === relay && p.epoch === epoch;
    const matched = current ? write() : 0;
    this.writes.push({ kind, relay, partition, superseded: !current, matched });
    return current && p !== undefined ? p : null;
  }

  private view(relay: string): View {
    const live = [...this.relays].filter(([, row]) => row.expiresAt > this.now);
    const liveIds = new Set(live.map(([id]) => id));
    const held = (id: string): number => this.partitions.filter((p) => p.owner === id).length;
    const peers = live.filter(([id]) => id !== relay).map(([, row]) => row.expiresAt - this.now);
    return {
      version: ++this.version,
      relays: live.filter(([, row]) => !row.leaving).map(([id]) => ({ id, held: held(id) })),
      own: this.partitions.flatMap((p, partition) => (p.owner === relay ? [{ partition, epoch: p.epoch, draining: p.draining }] : [])),
      grantable: this.partitions.filter((p) => p.owner === null || !liveIds.has(p.owner)).length,
      nextPeerExpiryIn: peers.length === 0 ? null : Math.min(...peers),
    };
  }
}
