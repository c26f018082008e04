import { fairShares, shareStep } from '../../src/core/partitions/fair-share.js';
import { mayStartPublish, nextHeartbeatAt, validUntil, type LeaseTiming } from '../../src/core/partitions/lease-clock.js';
import type { Grant, LeaseDatabase, OutboxRow, View } from './lease-database.js';
import type { ModelFlags } from './model-flags.js';
import { RelayPublishes } from './relay-publishes.js';
import type { Publish, RelayWorld } from './relay-world.js';

interface Held {
  readonly epoch: number;
  draining: boolean;
  position: number;
  queue: OutboxRow[];
  inflight: Publish | null;
  unflushed: number[];
  flushing: number;
  reading: boolean;
  releaseSent: boolean;
}

const POLL_MS = 50;
const FLUSH_MS = 20;
const TAKE = 16;

/**
 * A relay process as the design describes it: its own monotonic clock (`local`, whose rate the world sets),
 * heartbeats every lease/3 from the send time, `validUntil` from the latest successful beat's send, no publish
 * start after `validUntil - publishTimeout`, fair-share decisions on every view, drains before releases.
 */
export class ModelRelay {
  local: number;
  rate = 1;
  id = '';
  incarnation = 0;
  paused = false;
  /** Until then (own clock) the broker confirms nothing: every publish runs to its timeout. */
  slowBrokerUntil = 0;
  killed = false;
  stopped = false;
  leaving = false;
  /** Its lease ran out while its row may live: out of the shares until a beat's reply comes back in time. */
  private standby = false;
  readonly held = new Map<number, Held>();
  private readonly publishes: RelayPublishes;
  readonly inbox: { at: number; run: () => void }[] = [];
  private beatSent: number | null = null;
  private joinSent = false;
  private nextBeat = 0;
  private nextPoll = 0;
  /** The earliest peer expiry the latest view announced, on the own clock: read (and so rebalance) then. */
  private peerExpiry = Infinity;
  private nextFlush = 0;
  private lastVersion = 0;
  private acquiring = false;

  constructor(
    readonly name: string,
    private readonly world: RelayWorld,
    private readonly timing: LeaseTiming,
    private readonly partitionCount: number,
    private readonly flags: ModelFlags,
  ) {
    this.local = world.random() * 1e6;
    this.publishes = new RelayPublishes(this, world);
  }

  get alive(): boolean {
    return !this.killed && !this.stopped;
  }

  /** Whether the relay may act on its partitions now, by its own clock. */
  get leaseValid(): boolean {
    return this.beatSent !== null && this.local <= validUntil(this.beatSent, this.timing);
  }

  step(): void {
    if (!this.alive || this.paused) return;
    this.publishes.resume();
    const due = this.inbox.filter((m) => m.at <= this.world.realNow);
    this.inbox.splice(0, this.inbox.length, ...this.inbox.filter((m) => m.at > this.world.realNow));
    for (const message of due) message.run();
    if (!this.alive) return;
    // Timers fire in the order they fell due: after a pause the publish's end and the flush come before the
    // lease check, so a zombie's completions reach the database and only the epoch guard stops them.
    this.publishes.progress((publish) => this.settle(publish));
    if (this.local >= this.nextFlush) this.flush();
    if (this.beatSent !== null && !this.leaseValid) {
      this.dropAll();
      if (this.flags.noStandbyWhenLapsed !== true) this.standby = true;
    }
    if (!this.joinSent) this.join();
    if (this.beatSent !== null && this.local >= this.nextBeat) this.heartbeat();
    if (this.beatSent !== null && this.local >= Math.min(this.nextPoll, this.peerExpiry)) this.poll();
    for (const [partition, held] of this.held) this.advance(partition, held);
    if (this.leaving && this.held.size === 0 && this.beatSent !== null) this.leave();
  }

  kill(): void {
    this.publishes.kill();
    this.killed = true;
  }

  /** SIGSTOP: a publish already written only awaits its confirm; one not yet written goes out on resume. */
  pause(): void {
    this.paused = true;
    this.publishes.pause();
  }

  private call<T>(heartbeat: boolean, statement: (db: LeaseDatabase) => T, onReply: (reply: T) => void, onError: () => void = () => undefined): void {
    const incarnation = this.incarnation;
    const current = (run: () => void) => () => {
      if (incarnation === this.incarnation && this.alive) run();
    };
    this.world.send(this, heartbeat, statement, (reply) => current(() => onReply(reply))(), current(onError));
  }

  private join(): void {
    this.joinSent = true;
    this.incarnation += 1;
    this.id = `${this.name}.${this.incarnation}`;
    const sent = this.local;
    const id = this.id;
    this.call(
      true,
      (db) => db.join(id),
      (view) => {
        this.beatSent = sent;
        this.nextBeat = nextHeartbeatAt(sent, this.timing);
        this.apply(view);
      },
      () => {
        this.joinSent = false;
      },
    );
  }

  private heartbeat(): void {
    const sent = this.local;
    this.nextBeat = nextHeartbeatAt(sent, this.timing);
    const { id } = this;
    const leaving = this.leaving || this.standby;
    this.call(
      true,
      (db) => db.heartbeat(id, leaving),
      ({ alive, view }) => {
        if (!alive) return this.rejoin();
        if (this.local <= validUntil(sent, this.timing)) this.standby = false;
        const from = this.flags.validUntilFromReceipt ? this.local : sent;
        if (this.beatSent === null || from > this.beatSent) this.beatSent = from;
        this.apply(view);
      },
    );
  }

  private poll(): void {
    this.nextPoll = this.local + POLL_MS;
    this.peerExpiry = Infinity;
    const asks = [...this.held].filter(([, h]) => !h.draining && !h.reading && h.queue.length === 0 && h.inflight === null);
    for (const [, h] of asks) h.reading = true;
    const id = this.id;
    const positions = asks.map(([partition, h]) => ({ partition, position: h.position }));
    // a read sent before the partition was dropped and adopted again must not move the new memory's position
    const current = (partition: number): Held | undefined => {
      const h = this.held.get(partition);
      return asks.some(([p, asked]) => p === partition && asked === h) ? h : undefined;
    };
    this.call(
      false,
      (db) => db.read(id, positions, TAKE),
      ({ rows, view }) => {
        for (const ask of positions) {
          const h = current(ask.partition);
          if (h === undefined) continue;
          h.reading = false;
          h.queue = rows.get(ask.partition) ?? [];
          h.position = h.queue.at(-1)?.seq ?? h.position;
        }
        this.apply(view);
      },
      () => {
        for (const ask of positions) {
          const h = current(ask.partition);
          if (h !== undefined) h.reading = false;
        }
      },
    );
  }

  /** Brings memory in line with a view newer than any applied, then takes the next fair-share step. */
  private apply(view: View): void {
    if (view.version <= this.lastVersion) return;
    this.lastVersion = view.version;
    this.peerExpiry = view.nextPeerExpiryIn === null ? Infinity : this.local + view.nextPeerExpiryIn + 1;
    for (const [partition, h] of this.held) {
      const grant = view.own.find((g) => g.partition === partition);
      if (grant === undefined || grant.epoch !== h.epoch) this.drop(partition);
    }
    if (this.standby) {
      const { id } = this;
      for (const grant of view.own)
        this.call(
          false,
          (db) => db.release(id, grant.partition, grant.epoch),
          () => undefined,
        );
      return;
    }
    for (const grant of view.own) if (!this.held.has(grant.partition)) this.adopt(grant);
    if (this.leaving || this.acquiring) return;
    const target = fairShares(this.partitionCount, view.relays, this.partitionCount).get(this.id) ?? 0;
    const own = {
      owned: [...this.held].filter(([, h]) => !h.draining).map(([p]) => p),
      draining: [...this.held].filter(([, h]) => h.draining).map(([p]) => p),
    };
    const step = shareStep(target, own, view.grantable);
    if (step.kind === 'drain') for (const partition of step.partitions) this.drain(partition);
    if (step.kind === 'acquire') {
      this.acquiring = true;
      const id = this.id;
      this.call(
        false,
        (db) => db.acquire(id, step.count),
        ({ granted, view: after }) => {
          this.acquiring = false;
          for (const grant of granted) this.adopt(grant);
          if (granted.length > 0) this.nextPoll = this.local;
          this.apply(after);
        },
        () => {
          this.acquiring = false;
        },
      );
    }
  }

  private adopt(grant: Grant): void {
    this.held.set(grant.partition, {
      epoch: grant.epoch,
      draining: grant.draining,
      position: 0,
      queue: [],
      inflight: null,
      unflushed: [],
      flushing: 0,
      reading: false,
      releaseSent: false,
    });
    if (grant.draining) this.drain(grant.partition);
  }

  private drain(partition: number): void {
    const h = this.held.get(partition);
    if (h === undefined) return;
    h.draining = true;
    const { id } = this;
    this.call(
      false,
      (db) => db.drain(id, partition, h.epoch),
      () => undefined,
    );
    if (this.flags.releaseBeforeDrain) this.release(partition, h);
  }

  private release(partition: number, h: Held): void {
    h.releaseSent = true;
    const { id } = this;
    this.call(
      false,
      (db) => db.release(id, partition, h.epoch),
      () => {
        if (this.held.get(partition) === h && h.inflight === null) this.held.delete(partition);
      },
      () => {
        h.releaseSent = false;
      },
    );
  }

  /** A publish ended: its row awaits the next flush, unless the partition was dropped or adopted again meanwhile. */
  private settle(publish: Publish): void {
    const h = this.held.get(publish.partition);
    if (h?.inflight !== publish) return;
    h.inflight = null;
    h.unflushed.push(publish.row.seq);
  }

  private advance(partition: number, h: Held): void {
    if (h.inflight === null && !h.draining && h.queue.length > 0 && this.beatSent !== null && mayStartPublish(this.local, this.beatSent, this.timing)) {
      const [row, ...rest] = h.queue as [OutboxRow, ...OutboxRow[]];
      h.queue = rest;
      h.inflight = this.publishes.start(partition, row, this.timing.publishTimeoutMs, this.local < this.slowBrokerUntil);
    }
    const settled = h.inflight === null && h.unflushed.length === 0 && h.flushing === 0;
    if (h.draining && !h.releaseSent && settled) this.release(partition, h);
    if (h.draining && h.releaseSent && this.flags.releaseBeforeDrain && settled) this.held.delete(partition);
  }

  private flush(): void {
    this.nextFlush = this.local + FLUSH_MS;
    const { id } = this;
    for (const [partition, h] of this.held) {
      if (h.unflushed.length === 0) continue;
      const seqs = h.unflushed;
      h.unflushed = [];
      h.flushing += 1;
      this.call(
        false,
        (db) => db.complete(id, partition, h.epoch, seqs),
        () => {
          h.flushing -= 1;
        },
        () => {
          h.flushing -= 1;
          h.unflushed.push(...seqs);
        },
      );
    }
  }

  private drop(partition: number): void {
    this.held.delete(partition);
  }

  private dropAll(): void {
    this.held.clear();
    this.acquiring = false;
  }

  private rejoin(): void {
    this.incarnation += 1;
    this.dropAll();
    this.beatSent = null;
    this.joinSent = false;
    this.lastVersion = 0;
    this.acquiring = false;
    this.standby = false;
    if (this.leaving) this.stopped = true;
  }

  /** Graceful stop: a beat with `leaving`, drain everything, then delete the own row. */
  startLeaving(): void {
    this.leaving = true;
    this.heartbeat();
    for (const partition of this.held.keys()) this.drain(partition);
  }

  private leave(): void {
    const { id } = this;
    this.call(
      false,
      (db) => db.leave(id),
      () => undefined,
    );
    this.stopped = true;
  }
}
