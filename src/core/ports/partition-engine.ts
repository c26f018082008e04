/**
 * A table whose partition count changes while relays run (PostgreSQL's engine): what `outboxer status` shows of it
 * and what `outboxer migrate --partitions` and `--cancel-resize` ask of it (docs/resizing-partitions.md).
 */

/** The partitioning of one outbox table, as an operator reads it. */
export interface EngineState {
  readonly partitionCount: number;
  readonly generation: number;
  /** The count a resize waits to move to (grants closed), or null. */
  readonly resizeTo: number | null;
}

/** A relay whose lease still runs, as an operator sees it. */
export interface EngineRelay {
  readonly id: string;
  /** What the relay called itself at join (its owner name). */
  readonly name: string;
  /** It announced it is leaving: it takes nothing more. */
  readonly leaving: boolean;
  /** Partitions it owns or is draining. */
  readonly held: number;
  /** Time left on its lease, by the database clock. */
  readonly leaseLeftMs: number;
  /** What it reported with its last beat about its broker, or null while it can publish. */
  readonly trouble: { readonly reason: string; readonly since: Date } | null;
}

/** The relays of a table and who holds its partitions, read without writing. */
export interface EngineRelays {
  /** Live relays, by name then id. */
  readonly relays: readonly EngineRelay[];
  /** Partitions of the current generation no live relay holds: free, or named by a relay whose lease ran out. */
  readonly unowned: number;
  /** Of those, the ones still named by a relay whose lease ran out (the next acquire reaps it). */
  readonly lapsed: number;
}

/** Progress of a resize, for printing. `waiting` comes once per poll while relays still hold partitions. */
export type ResizeProgress =
  | { readonly step: 'indexes'; readonly partitions: number }
  | { readonly step: 'waiting'; readonly relays: number; readonly held: number; readonly waitedMs: number }
  | { readonly step: 'switched'; readonly partitions: number; readonly generation: number }
  | { readonly step: 'dropped'; readonly indexes: readonly string[] };

export interface ResizeRequest {
  /** The new partition count, 1 to 1024. */
  readonly partitions: number;
  /** How long to wait for the relays to give back the partitions. Default 300000. */
  readonly waitTimeoutMs?: number | undefined;
  /** How long to wait for the partitioning row's lock, per attempt. */
  readonly lockTimeoutMs?: number | undefined;
  /** How many times to try for that lock. */
  readonly lockAttempts?: number | undefined;
  readonly onProgress?: ((progress: ResizeProgress) => void) | undefined;
}

export interface ResizeResult {
  readonly from: number;
  readonly to: number;
  readonly generation: number;
  /** False when the table already had that count and no resize was waiting. */
  readonly changed: boolean;
  /** A resize to the same count had been left waiting (its process ended) and this one finished it. */
  readonly resumed: boolean;
  readonly droppedIndexes: readonly string[];
}

export interface ResizeCancellation {
  /** The count the cancelled resize was moving to, or null when none was waiting. */
  readonly cancelled: number | null;
  readonly droppedIndexes: readonly string[];
}

/** The engine of one table. Each call is idempotent; a refusal has a stable code (OUTBOXER_RESIZE_IN_PROGRESS, ...). */
export interface PartitionEngine {
  /** Throws `OUTBOXER_NOT_MIGRATED` when a migration is missing. */
  readState(): Promise<EngineState>;
  readRelays(): Promise<EngineRelays>;
  resize(request: ResizeRequest): Promise<ResizeResult>;
  cancelResize(): Promise<ResizeCancellation>;
}
