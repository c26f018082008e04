/** One injected fault: what, on whom, when. The checker attributes duplicates and delays to these. */
export interface FaultRecord {
  readonly id: number;
  readonly kind: string;
  /** The relay incarnation it hit (process faults); undefined when it hit every relay (network, broker, database). */
  readonly target?: string | undefined;
  /** Keys it holds back by design (a row lock), when narrower than everything. */
  readonly keys?: readonly string[] | undefined;
  /**
   * Fan-out: the destinations it hits (one destination's broker cut), when narrower than every destination. It
   * explains copies and delays of those destinations' rows only.
   */
  readonly destinations?: readonly string[] | undefined;
  readonly start: number;
  end: number;
  /** A graceful stop promises no duplicate at all. */
  readonly mayDuplicate: boolean;
  /** What the schedule saw of the system just before the fault healed (figures only, never a verdict by itself). */
  observed?: Readonly<Record<string, number>>;
}

export class FaultLog {
  readonly records: FaultRecord[] = [];

  /** Records a fault now; returns it so that `end` can be set when it heals. */
  begin(kind: string, options: { target?: string; keys?: readonly string[]; destinations?: readonly string[]; mayDuplicate?: boolean } = {}): FaultRecord {
    const now = Date.now();
    const record: FaultRecord = {
      id: this.records.length + 1,
      kind,
      ...(options.target === undefined ? {} : { target: options.target }),
      ...(options.keys === undefined ? {} : { keys: options.keys }),
      ...(options.destinations === undefined ? {} : { destinations: options.destinations }),
      start: now,
      end: now,
      mayDuplicate: options.mayDuplicate ?? true,
    };
    this.records.push(record);
    return record;
  }

  heal(record: FaultRecord): void {
    record.end = Date.now();
  }

  /** When the last fault healed (0 if none). */
  lastHeal(): number {
    return this.records.reduce((latest, r) => Math.max(latest, r.end), 0);
  }
}

/** Whether `fault` hits the rows of `destination` (every fault without `destinations` hits every destination). */
export function hitsDestination(fault: Pick<FaultRecord, 'destinations'>, destination: string): boolean {
  return fault.destinations === undefined || fault.destinations.includes(destination);
}
