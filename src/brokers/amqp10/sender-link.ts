import type { Connection, Delivery, EventContext, Message, Sender, Session } from 'rhea';
import type { PublishError } from '../../core/errors.js';
import { type Amqp10Errors, type BrokerError, brokerError } from './errors.js';

/** Where a publish is when its time runs out, for the timeout's message. */
export type AttemptStage = 'connecting' | 'attaching' | 'waiting for link credit' | 'sent, waiting for the disposition';

/** One publish in progress, from the call to its settlement. */
export interface Attempt {
  readonly id: string;
  readonly wire: Message;
  readonly bytes: number;
  stage: AttemptStage;
  settled: boolean;
  delivery: Delivery | undefined;
  settle(error?: PublishError): void;
}

/**
 * One sender link to one address, on a session of its own: RabbitMQ 3.10 answers an attach to a missing exchange
 * by ending the whole session, which must not take the other addresses' links with it. Publishes queue here until
 * the link has credit, are sent unsettled, and settle on the broker's disposition. A link is never repaired: once
 * detached it fails what it holds, and the next publish to its address attaches a new one.
 */
export class SenderLink {
  dead = false;
  readonly #session: Session;
  readonly #sender: Sender;
  readonly #waiting: Attempt[] = [];
  readonly #inFlight = new Map<Delivery, Attempt>();
  /** Transfers handed to rhea on this link; those beyond its `delivery_count` are not written yet. */
  #handed = 0;

  constructor(
    connection: Connection,
    readonly address: string,
    private readonly errors: Amqp10Errors,
    private readonly secrets: readonly string[],
    private readonly onDead: (link: SenderLink) => void,
  ) {
    this.#session = connection.create_session();
    this.#session.on('session_error', (context: EventContext) => this.#die(context.session?.error));
    this.#session.on('session_close', (context: EventContext) => this.#die(context.session?.error));
    this.#session.begin();
    this.#sender = this.#session.open_sender({ target: { address }, snd_settle_mode: 0, rcv_settle_mode: 0, autosettle: true });
    this.#sender.on('sender_open', () => this.#pump());
    this.#sender.on('sendable', () => this.#pump());
    this.#sender.on('accepted', (context: EventContext) => this.#settle(context.delivery));
    this.#sender.on('rejected', (context: EventContext) =>
      this.#settle(context.delivery, (id) =>
        this.errors.rejected(id, address, brokerError((context.delivery?.remote_state as { error?: unknown } | undefined)?.error, this.secrets)),
      ),
    );
    this.#sender.on('released', (context: EventContext) => this.#settle(context.delivery, (id) => this.errors.released(id, address, 'released')));
    this.#sender.on('modified', (context: EventContext) => this.#settle(context.delivery, (id) => this.errors.released(id, address, 'modified')));
    this.#sender.on('sender_error', (context: EventContext) => this.#die(context.sender?.error));
    this.#sender.on('sender_close', (context: EventContext) => this.#die(context.sender?.error));
  }

  /** Publishes waiting for credit or for their disposition: such a link is not detached to make room. */
  get busy(): boolean {
    return this.#waiting.some((attempt) => !attempt.settled) || this.#inFlight.size > 0;
  }

  /** The broker's max-message-size for this link, once attached (0 or absent: no limit). */
  get maxMessageSize(): number | undefined {
    const size: unknown = (this.#sender as unknown as { remote?: { attach?: { max_message_size?: unknown } } }).remote?.attach?.max_message_size;
    return typeof size === 'number' && size > 0 ? size : undefined;
  }

  submit(attempt: Attempt): void {
    if (this.dead) {
      attempt.settle(this.errors.detached(attempt.id, this.address, { condition: undefined, description: 'the link was already detached' }, false));
      return;
    }
    attempt.stage = this.#sender.is_remote_open() ? 'waiting for link credit' : 'attaching';
    this.#waiting.push(attempt);
    this.#pump();
  }

  /** A publish that settled on its own (timeout): a late disposition for it is ignored. */
  forget(attempt: Attempt): void {
    if (attempt.delivery !== undefined) this.#inFlight.delete(attempt.delivery);
  }

  /** The connection is gone: everything held fails as unavailable; no frame can be sent any more. */
  connectionLost(error: BrokerError): void {
    if (this.dead) return;
    this.dead = true;
    this.#failAll((attempt, sent) => this.errors.lost(attempt.id, error, sent));
  }

  /** Detaches the link (answering the broker's detach, if it sent one), then ends its session. */
  retire(): void {
    this.dead = true;
    try {
      if (!this.#sender.is_closed()) this.#sender.close();
      this.#session.close();
    } catch {
      // the connection is gone already
    }
  }

  /**
   * Credit not yet spoken for. rhea counts credit down only when it writes a transfer (on its next tick), and holds
   * what `send` was given beyond it: a message that waits there cannot be withdrawn when its publish times out.
   */
  #credit(): number {
    const { credit, delivery_count: written } = this.#sender as unknown as { credit?: unknown; delivery_count?: unknown };
    if (!this.#sender.sendable() || typeof credit !== 'number' || typeof written !== 'number') return 0;
    return credit - (this.#handed - written);
  }

  #pump(): void {
    while (!this.dead && this.#waiting.length > 0 && this.#credit() > 0) {
      const attempt = this.#waiting.shift();
      if (attempt === undefined || attempt.settled) continue;
      const limit = this.maxMessageSize;
      if (limit !== undefined && attempt.bytes > limit) {
        attempt.settle(this.errors.tooLarge(attempt.id, attempt.bytes, limit, `the max-message-size of the link to "${this.address}"`));
        continue;
      }
      const delivery = this.#sender.send(attempt.wire);
      this.#handed++;
      attempt.delivery = delivery;
      attempt.stage = 'sent, waiting for the disposition';
      this.#inFlight.set(delivery, attempt);
    }
    for (const attempt of this.#waiting) if (!attempt.settled && this.#sender.is_remote_open()) attempt.stage = 'waiting for link credit';
  }

  #settle(delivery: Delivery | undefined, failure?: (id: string) => PublishError): void {
    if (delivery === undefined) return;
    const attempt = this.#inFlight.get(delivery);
    if (attempt === undefined) return;
    this.#inFlight.delete(delivery);
    attempt.settle(failure?.(attempt.id));
  }

  #die(error: unknown): void {
    if (this.dead) return;
    this.dead = true;
    const reason = brokerError(error ?? 'the broker detached the link without giving a reason', this.secrets);
    this.#failAll((attempt, sent) => this.errors.detached(attempt.id, this.address, reason, sent));
    this.onDead(this);
    this.retire();
  }

  #failAll(failure: (attempt: Attempt, sent: boolean) => PublishError): void {
    const waiting = this.#waiting.splice(0);
    const inFlight = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const attempt of inFlight) attempt.settle(failure(attempt, true));
    for (const attempt of waiting) if (!attempt.settled) attempt.settle(failure(attempt, false));
  }
}
