import type { LeaseDatabase, OutboxRow } from './lease-database.js';
import type { ModelRelay } from './model-relay.js';

/** One publish as the broker sees it: `end` stays null while it is in progress. */
export interface Publish {
  readonly relay: ModelRelay;
  /** The relay id (process and incarnation) that started it. */
  readonly holder: string;
  readonly partition: number;
  readonly row: OutboxRow;
  readonly start: number;
  end: number | null;
  /** A pause froze it between its start and the socket write: its send goes out on resume. */
  frozen: boolean;
  transmitted: boolean;
  readonly transmitLocal: number;
  readonly endLocal: number;
}

/** What the relay needs from the world it runs in: a network to the database and a broker. */
export interface RelayWorld {
  readonly realNow: number;
  random(): number;
  /**
   * Runs `statement` on the database after a network delay; `onReply` runs on the relay when the reply arrives,
   * `onError` instead when the statement never reached the database (the connection failed).
   */
  send<T>(relay: ModelRelay, heartbeat: boolean, statement: (db: LeaseDatabase) => T, onReply: (reply: T) => void, onError: () => void): void;
  publishStarted(publish: Publish): void;
  transmit(publish: Publish): void;
  publishEnded(publish: Publish): void;
}
