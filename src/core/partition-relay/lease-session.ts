import { BEATS_PER_LEASE, nextHeartbeatAt, publishDeadline, validUntil, type LeaseTiming } from '../partitions/lease-clock.js';
import type { Membership, RelayLeases } from '../ports.js';
import type { RelayOptions } from '../relay-options.js';
import { bounded } from './bounded-statement.js';
import { beatVerdict, grantsClosed, groupShape, nextShareStep, peerExpiryAt } from './membership-step.js';
import { adoptEntry, type PartitionEntry, reconcile } from './partition-book.js';

/** Looks again this long after a peer's announced expiry, for the database's clock to pass it too. */
const PEER_EXPIRY_MARGIN_MS = 50;

export interface SessionHooks {
  /** Whether a batch of this partition is still publishing or completing (it is released only after). */
  isBusy(partition: number): boolean;
  /** Why this relay cannot publish now (its broker unreachable), or `null`: reported with each join and beat. */
  trouble(): string | null;
}

/**
 * One relay's membership of the group, by the lease protocol of docs/design/lease-protocol.md: join, heartbeat every lease/3
 * from the send, trust the lease until `send + 0.8 x lease`, take fair-share steps, drain before release. At
 * `validUntil` without a trusted beat the relay lapses: it drops every partition and stands by (beats as
 * leaving, releases by epoch what the database still gives it), and once a reply comes back in time and it
 * holds nothing, it leaves and joins again as a new relay (the store keeps `leaving` for good). Every statement
 * is bounded by `lease/3`. The partitions it holds are `book`; the relay reads and publishes them.
 */
export class LeaseSession {
  readonly book = new Map<number, PartitionEntry>();
  readonly #leases: RelayLeases;
  readonly #options: RelayOptions;
  readonly #timing: LeaseTiming;
  readonly #hooks: SessionHooks;
  readonly #statementMs: number;
  #relayId: string | undefined;
  #membership: Membership | undefined;
  #beatSentAt: number | undefined;
  #standby = false;
  #stepDue = false;
  #resizeWaiting = false;
  #nextBeatAt = 0;
  #peerExpiryAt = Number.POSITIVE_INFINITY;
  #nextCheckAt = Number.POSITIVE_INFINITY;
  /** The group as the last beat, join or check showed it (`groupShape`). */
  #shape = '';
  /** Whether the last join or beat sent said this relay was in trouble. */
  #reportedTrouble = false;

  constructor(leases: RelayLeases, options: RelayOptions, hooks: SessionHooks) {
    this.#leases = leases;
    this.#options = options;
    this.#timing = { leaseMs: options.leaseMs, publishTimeoutMs: options.publishTimeoutMs };
    this.#hooks = hooks;
    this.#statementMs = Math.floor(options.leaseMs / BEATS_PER_LEASE);
  }

  get relayId(): string | undefined {
    return this.#relayId;
  }

  /** The membership of the last trusted heartbeat or join (the live relays, the config); undefined before the first. */
  get membership(): Membership | undefined {
    return this.#membership;
  }

  get partitionCount(): number | undefined {
    return this.#membership?.config.partitionCount;
  }

  /** The last instant (monotonic ms) a publish may start, or -Infinity while no lease is trusted. */
  get publishDeadline(): number {
    if (this.#beatSentAt === undefined || this.#standby) return Number.NEGATIVE_INFINITY;
    return publishDeadline(this.#beatSentAt, this.#timing);
  }

  /** When the session must act next without being asked: a heartbeat, a peer's expiry, or its own lapse. */
  get dueAt(): number {
    const lapse = this.#beatSentAt === undefined || this.#standby ? Number.POSITIVE_INFINITY : validUntil(this.#beatSentAt, this.#timing);
    return Math.min(this.#nextBeatAt, this.#peerExpiryAt, lapse, this.#nextCheckAt);
  }

  /** Whether this relay said it is in broker trouble with its last join or beat. */
  get reportedTrouble(): boolean {
    return this.#reportedTrouble;
  }

  /** Joins, beats when due, lapses when the lease is no longer trusted, and takes the next fair-share step. */
  async tick(stopping: boolean): Promise<void> {
    const now = performance.now();
    let failure: { readonly error: unknown } | undefined;
    try {
      if (this.#relayId === undefined) await this.#join();
      else if (now >= this.#nextBeatAt || now >= this.#peerExpiryAt || this.#troubleChanged()) await this.#beat();
      else if (now >= this.#nextCheckAt && (await this.#groupChanged())) await this.#beat();
    } catch (error) {
      failure = { error };
    }
    // a beat that failed or got no answer still lets the lease lapse on time, and a lapsed relay gives back
    if (this.#beatSentAt !== undefined && !this.#standby && performance.now() > validUntil(this.#beatSentAt, this.#timing)) this.#lapse();
    if (this.#standby) await this.#standBy();
    if (failure !== undefined) throw failure.error;
    if (this.#standby) return;
    await this.#releaseDrained();
    if (!stopping && this.#stepDue) await this.#shareStep();
  }

  /** Frees every partition and deletes the relays row; call once every publish ended and its completion committed. */
  async leave(): Promise<void> {
    const relayId = this.#relayId;
    this.#forget();
    if (relayId !== undefined) await bounded(this.#leases.leave(relayId), this.#statementMs, `leave of relay ${relayId}`);
  }

  /** A completion found the partition no longer mine at that epoch: drop it (the next beat confirms). */
  drop(entry: PartitionEntry): void {
    if (this.book.get(entry.partition) === entry) this.book.delete(entry.partition);
  }

  async #join(): Promise<void> {
    const sentAt = performance.now();
    this.#nextBeatAt = Number.POSITIVE_INFINITY;
    const trouble = this.#hooks.trouble();
    const membership = await this.#statement(this.#leases.join({ name: this.#options.owner, leaseMs: this.#options.leaseMs, trouble }), 'join');
    this.#reportedTrouble = trouble !== null;
    this.#relayId = membership.relayId;
    this.#beatSentAt = sentAt;
    this.#nextBeatAt = nextHeartbeatAt(sentAt, this.#timing);
    this.#options.logger.info({ owner: this.#options.owner, relayId: membership.relayId }, 'relay joined the partition leases');
    this.#apply(membership, true);
  }

  async #beat(): Promise<void> {
    const relayId = this.#relayId as string;
    const sentAt = performance.now();
    this.#nextBeatAt = nextHeartbeatAt(sentAt, this.#timing);
    const trouble = this.#hooks.trouble();
    const membership = await this.#statement(
      this.#leases.heartbeat(relayId, { leaving: this.#standby, trouble }),
      `heartbeat of relay ${relayId}`,
      !this.#standby,
    );
    if (relayId !== this.#relayId) return;
    this.#reportedTrouble = trouble !== null;
    const verdict = beatVerdict(sentAt, performance.now(), membership, this.#timing);
    if (verdict === 'rejoin') {
      this.#options.logger.warn(
        { owner: this.#options.owner, relayId },
        'lease ran out on the database clock; dropping every partition and joining as a new relay',
      );
      this.#forget();
      return;
    }
    if (verdict === 'trusted' && !this.#standby && (this.#beatSentAt === undefined || sentAt > this.#beatSentAt)) this.#beatSentAt = sentAt;
    this.#apply(membership, verdict === 'trusted');
    if (this.#standby && verdict === 'trusted' && membership.owned.length === 0 && this.book.size === 0) {
      this.#options.logger.info(
        { owner: this.#options.owner, relayId },
        'lapsed relay holds nothing and its beats come back in time; joining again as a new relay',
      );
      await this.leave();
    }
  }

  #apply(membership: Membership, trusted: boolean): void {
    this.#membership = membership;
    this.#peerExpiryAt = peerExpiryAt(membership, performance.now(), PEER_EXPIRY_MARGIN_MS);
    this.#shape = groupShape(membership);
    this.#nextCheckAt = this.#options.handoverCheckMs > 0 ? performance.now() + this.#options.handoverCheckMs : Number.POSITIVE_INFINITY;
    const { drop, adopt } = reconcile(this.book, membership.owned);
    for (const partition of drop) this.book.delete(partition);
    if (trusted && !this.#standby) for (const held of adopt) this.book.set(held.partition, adoptEntry(held));
    this.#stepDue = trusted;
    this.#noteResize(membership);
  }

  #noteResize(membership: Membership): void {
    const closed = grantsClosed(membership);
    if (closed && !this.#resizeWaiting) {
      const { resizeTo } = membership.config;
      this.#options.logger.warn(
        { owner: this.#options.owner, resizeTo },
        `a resize to ${resizeTo ?? 'another count of'} partitions waits for every partition to be free: this relay drains and releases what it holds, and acquires again under the new count once the resize ends`,
      );
      this.#options.hooks.onWaitingForResize?.({ resizeTo });
    }
    this.#resizeWaiting = closed;
  }

  async #shareStep(): Promise<void> {
    this.#stepDue = false;
    const relayId = this.#relayId;
    const membership = this.#membership;
    if (relayId === undefined || membership === undefined) return;
    const step = nextShareStep(membership, this.book, this.#reportedTrouble);
    if (step.kind === 'drain') {
      const entries = step.partitions.map((p) => this.book.get(p)).filter((e): e is PartitionEntry => e !== undefined);
      for (const entry of entries) entry.draining = true;
      await this.#statement(this.#leases.drain(relayId, entries), `drain by relay ${relayId}`);
      // what has no batch in flight goes at once; the rest when its batch ends (the relay's loop turns then)
      await this.#releaseDrained();
    }
    if (step.kind === 'acquire') {
      const granted = await this.#statement(this.#leases.acquire(relayId, step.count), `acquire by relay ${relayId}`);
      if (relayId !== this.#relayId) return;
      for (const lease of granted) this.book.set(lease.partition, adoptEntry(lease));
      if (granted.length > 0)
        this.#options.logger.info({ owner: this.#options.owner, relayId, partitions: granted.map((g) => g.partition) }, 'partitions acquired');
    }
  }

  /** Releases the draining partitions whose work has ended (publishes confirmed, completions committed). */
  async #releaseDrained(): Promise<void> {
    const relayId = this.#relayId;
    const done = [...this.book.values()].filter((e) => e.draining && !this.#hooks.isBusy(e.partition));
    if (relayId === undefined || done.length === 0) return;
    for (const entry of done) this.book.delete(entry.partition);
    await this.#statement(this.#leases.release(relayId, done), `release by relay ${relayId}`);
    this.#options.logger.info({ owner: this.#options.owner, relayId, partitions: done.map((e) => e.partition) }, 'partitions released');
  }

  #lapse(): void {
    this.#options.logger.warn(
      { owner: this.#options.owner, relayId: this.#relayId, partitions: this.book.size },
      'lease no longer trusted (no heartbeat came back in time): dropping every partition and standing by',
    );
    this.#options.hooks.onError?.({
      stage: 'lease',
      error: `relay ${this.#relayId ?? ''} lost its lease: no heartbeat came back within ${Math.round(0.8 * this.#options.leaseMs)} ms of its send`,
    });
    this.book.clear();
    this.#standby = true;
    this.#nextBeatAt = performance.now();
  }

  /** Standing by: gives back, by epoch, what the database still names me owner of, once its work ended. */
  async #standBy(): Promise<void> {
    const relayId = this.#relayId;
    const owned = this.#membership?.owned ?? [];
    const idle = owned.filter((held) => !this.#hooks.isBusy(held.partition));
    if (relayId === undefined || idle.length === 0) return;
    await this.#statement(this.#leases.release(relayId, idle), `release by lapsed relay ${relayId}`);
    this.#membership = this.#membership === undefined ? undefined : { ...this.#membership, owned: owned.filter((held) => !idle.includes(held)) };
  }

  #forget(): void {
    this.book.clear();
    this.#relayId = undefined;
    this.#membership = undefined;
    this.#beatSentAt = undefined;
    this.#standby = false;
    this.#stepDue = false;
    this.#peerExpiryAt = Number.POSITIVE_INFINITY;
    this.#nextCheckAt = Number.POSITIVE_INFINITY;
    this.#shape = '';
    this.#nextBeatAt = 0;
  }

  /** Whether this relay's trouble began or ended since its last join or beat said otherwise. */
  #troubleChanged(): boolean {
    return !this.#standby && (this.#hooks.trouble() !== null) !== this.#reportedTrouble;
  }

  /**
   * The group check between beats (`handoverCheckMs`): reads the membership, writing nothing, and says whether
   * anything a share depends on changed since the last beat, join or check showed it.
   */
  async #groupChanged(): Promise<boolean> {
    const relayId = this.#relayId as string;
    this.#nextCheckAt = performance.now() + this.#options.handoverCheckMs;
    if (this.#standby) return false;
    const membership = await this.#statement(this.#leases.membership(relayId), `group check of relay ${relayId}`);
    if (relayId !== this.#relayId) return false;
    const shape = groupShape(membership);
    if (shape === this.#shape) return false;
    this.#shape = shape;
    return true;
  }

  async #statement<T>(statement: Promise<T>, what: string, keepsLease = false): Promise<T> {
    try {
      return await bounded(statement, this.#statementMs, what);
    } catch (error) {
      // a beat that keeps a lease is tried again after the first error backoff, not a whole beat interval later;
      // joins and a lapsed relay's beats follow the loop's doubling backoff
      if (keepsLease) this.#nextBeatAt = Math.min(this.#nextBeatAt, performance.now() + this.#options.errorBackoffMs);
      throw error;
    }
  }
}
