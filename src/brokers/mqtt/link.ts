import { connect, type IConnackPacket, type IDisconnectPacket, type MqttClient, type Packet } from 'mqtt';
import { classifyConnectError, ConnectFailure, describeDriverError } from './errors.js';
import type { ResolvedMqttPublisherOptions } from './options.js';
import { describeReasonCode, MqttReasonCodes } from './reason-codes.js';
import type { MqttPublication } from './wire.js';

/** MQTT 5: a CONNACK without Receive Maximum means 65,535 (3.2.2.3.3). */
const DEFAULT_RECEIVE_MAXIMUM = 65_535;

/** How a PUBLISH sent on a link ended: a PUBACK (its reason code and reason string), or the link died first. */
export type SendOutcome =
  | { readonly kind: 'acked'; readonly reasonCode: number; readonly reasonString: string | undefined }
  | { readonly kind: 'lost'; readonly reason: string }
  | { readonly kind: 'error'; readonly reason: string };

/**
 * One MQTT connection (one MqttClient with its reconnects turned off). A link is never repaired: when the
 * connection drops, every publish in flight on it ends at once as lost (its PUBACK can never come on another
 * connection, and the client's offline store is dropped with it), and the next publish opens a new link.
 * It keeps the broker's Receive Maximum: no more QoS 1 publishes in flight than the CONNACK allows.
 */
export class MqttLink {
  dead = false;
  /** In-flight QoS 1 publishes the broker accepts at once (its CONNACK's Receive Maximum). */
  readonly receiveMaximum: number;
  /** The broker's Maximum Packet Size, when its CONNACK names one. */
  readonly maximumPacketSize: number | undefined;
  #inFlight = 0;
  readonly #roomWaiters = new Set<() => void>();
  readonly #pending = new Set<(reason: string) => void>();
  #disposed: Promise<void> | undefined;

  constructor(
    readonly client: MqttClient,
    connack: IConnackPacket,
    private readonly onDeath: (link: MqttLink, reason: string) => void,
    private readonly closeTimeoutMs: number,
  ) {
    this.receiveMaximum = connack.properties?.receiveMaximum ?? DEFAULT_RECEIVE_MAXIMUM;
    this.maximumPacketSize = connack.properties?.maximumPacketSize;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get hasRoom(): boolean {
    return this.#inFlight < this.receiveMaximum;
  }

  /** Calls `wake` once a slot is free or the link died; returns the unsubscribe. */
  onRoomOrDeath(wake: () => void): () => void {
    if (this.dead || this.hasRoom) {
      wake();
      return () => undefined;
    }
    this.#roomWaiters.add(wake);
    return () => this.#roomWaiters.delete(wake);
  }

  /** Hands a free slot on to the next waiter: for a waiter that was woken but gave up before it sent. */
  passRoom(): void {
    if (this.hasRoom) this.#wakeOne();
  }

  /** Sends a QoS 1 PUBLISH; `done` is called exactly once, with the PUBACK or when the link dies first. */
  send(publication: MqttPublication, done: (outcome: SendOutcome) => void): void {
    this.#inFlight++;
    let settled = false;
    const finish = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      this.#pending.delete(lost);
      this.#inFlight--;
      this.#wakeOne();
      done(outcome);
    };
    const lost = (reason: string): void => finish({ kind: 'lost', reason });
    this.#pending.add(lost);
    this.client.publish(publication.topic, publication.payload, publication.options, (failure?: Error | null, packet?: Packet) => {
      const error = failure ?? undefined; // MQTT.js passes null on success
      const reasonCode = (packet as { reasonCode?: number } | undefined)?.reasonCode ?? (error as { code?: unknown } | undefined)?.code;
      const reasonString = (packet as { properties?: { reasonString?: string } } | undefined)?.properties?.reasonString;
      if (typeof reasonCode === 'number' || error === undefined)
        finish({ kind: 'acked', reasonCode: typeof reasonCode === 'number' ? reasonCode : MqttReasonCodes.success, reasonString });
      else if (this.dead || !this.client.connected) finish({ kind: 'lost', reason: error.message });
      else finish({ kind: 'error', reason: error.message });
    });
  }

  /** Marks the link dead (the first reason wins), ends what is in flight as lost, and drops the connection. */
  fail(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    for (const lost of [...this.#pending]) lost(reason);
    this.#wakeAll();
    this.onDeath(this, reason);
    this.#disposed ??= new Promise((resolve) => this.client.end(true, {}, () => resolve()));
  }

  /** A deliberate close: a DISCONNECT to the broker, bounded by the connect timeout, then the socket goes. */
  retire(): Promise<void> {
    this.dead = true;
    this.#wakeAll();
    this.#disposed ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.client.end(true, {}, () => resolve()), this.closeTimeoutMs);
      timer.unref();
      this.client.end(false, { reasonCode: MqttReasonCodes.success }, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.#disposed;
  }

  #wakeOne(): void {
    const [first] = this.#roomWaiters;
    if (first === undefined) return;
    this.#roomWaiters.delete(first);
    first();
  }

  #wakeAll(): void {
    const waiters = [...this.#roomWaiters];
    this.#roomWaiters.clear();
    for (const wake of waiters) wake();
  }
}

/**
 * Opens a link: TCP (or TLS, or a WebSocket), CONNECT with clean start and no session kept, and the CONNACK, all
 * within connectTimeoutMs. Credentials go to the client as options, never inside the URL. Rejects with a
 * ConnectFailure whose reason is scrubbed of secrets.
 */
export function openLink(options: ResolvedMqttPublisherOptions, onDeath: (link: MqttLink, reason: string) => void): Promise<MqttLink> {
  const describe = (error: unknown): string => describeDriverError(error, options.secrets);
  return new Promise<MqttLink>((resolve, reject) => {
    const client = connect(options.url, {
      protocolVersion: 5,
      clientId: options.clientId,
      ...(options.username === undefined ? {} : { username: options.username }),
      ...(options.password === undefined ? {} : { password: options.password }),
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: options.connectTimeoutMs,
      keepalive: options.keepaliveSeconds,
      resubscribe: false,
      queueQoSZero: false,
      properties: { sessionExpiryInterval: 0, requestProblemInformation: true },
    });
    let link: MqttLink | undefined;
    let disconnectReason: string | undefined;
    let lastError: string | undefined;
    let gaveUp = false;
    const giveUp = (failure: ConnectFailure): void => {
      if (gaveUp) return;
      gaveUp = true;
      clearTimeout(timer);
      client.end(true);
      reject(failure);
    };
    const timer = setTimeout(() => giveUp(new ConnectFailure('timeout', 'connack timeout')), options.connectTimeoutMs + 250);
    timer.unref();
    client.on('error', (error: Error) => {
      if (link === undefined) giveUp(classifyConnectError(error, options.secrets));
      else lastError ??= describe(error);
    });
    client.on('disconnect', (packet: IDisconnectPacket) => {
      disconnectReason = `the broker sent DISCONNECT ${describeReasonCode(packet.reasonCode ?? MqttReasonCodes.success)}`;
      link?.fail(disconnectReason);
    });
    client.on('close', () => {
      if (link === undefined) giveUp(new ConnectFailure('closed', lastError ?? 'the server closed the connection before its CONNACK'));
      else link.fail(disconnectReason ?? lastError ?? 'connection closed');
    });
    client.once('connect', (connack: IConnackPacket) => {
      clearTimeout(timer);
      if (connack.properties?.maximumQoS === 0) {
        giveUp(new ConnectFailure('refused', 'Maximum QoS 0', MqttReasonCodes.qosNotSupported));
        return;
      }
      link = new MqttLink(client, connack, onDeath, options.connectTimeoutMs);
      resolve(link);
    });
  });
}
