/** One injected fault: what, on whom, when. The checker attributes duplicates and delays to these. */
export interface FaultRecord {
  readonly id: number;
  readonly kind: string;
  /** The relay incarnation it hit (process faults); undefined when it hit every relay (network, broker, database). */
  readonly target?: string | undefined;
  /** Keys it holds back by design (a row lock), when narrower than everything. */
  readonly keys?: readonly string[] | undefined;
  readonly start: number;
  end: number;
  /** A graceful stop promises no duplicate at all. */
  readonly mayDuplicate: boolean;
}

export class FaultLog {
  readonly records: FaultRecord[] = [];

  /** Records a fault now; returns it so that `end` can be set when it heals. */
  begin(kind: string, options: { target?: string; keys?: readonly string[]; mayDuplicate?: boolean } = {}): FaultRecord {
    const now = Date.now();
    const record: FaultRecord = {
      id: this.records.length + 1,
      kind,
      ...(options.target === undefined ? {} : { target: options.target }),
      ...(options.keys === undefined ? {} : { keys: options.keys }),
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
