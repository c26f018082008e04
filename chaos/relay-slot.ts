import { join } from 'node:path';
import type { TcpProxy } from '../test/support/tcp-proxy.js';
import { RoleProcess, type RoleExit } from './role-process.js';
import type { RelayConfig } from './spec.js';

export interface Incarnation {
  readonly slot: number;
  readonly incarnation: number;
  readonly name: string;
  readonly journal: string;
  readonly process: RoleProcess;
  readonly killPoint: RelayConfig['killPoint'];
}

/**
 * One of the N relay positions. A relay that dies (killed by a fault or by its own kill point) is
 * started again after `restartDelayMs`, as a new incarnation with its own journal, until `close()`.
 */
export class RelaySlot {
  readonly incarnations: Incarnation[] = [];
  #closed = false;

  constructor(
    readonly index: number,
    private readonly base: Omit<RelayConfig, 'index' | 'incarnation' | 'journal' | 'killPoint' | 'applicationName'> & { readonly appPrefix: string },
    private readonly secrets: Readonly<Record<string, string>>,
    private readonly outDir: string,
    private readonly restartDelayMs: number,
    private readonly onExit: (incarnation: Incarnation, exit: RoleExit) => void,
    /** Where (if anywhere) an incarnation kills itself: decided by the scenario's seeded plan. */
    private readonly killPlan: (slot: number, incarnation: number) => RelayConfig['killPoint'],
    /** The slot's own way to the database, when the scenario gives each relay one. */
    readonly databaseProxy?: TcpProxy,
    /** The slot's own way to the broker, when the scenario gives each relay one. */
    readonly brokerProxy?: TcpProxy,
  ) {}

  get current(): Incarnation | undefined {
    const last = this.incarnations.at(-1);
    return last?.process.running === true ? last : undefined;
  }

  start(): Incarnation {
    const incarnation = this.incarnations.length;
    const name = `relay-${this.index}-${incarnation}`;
    const journal = join(this.outDir, `${name}.jsonl`);
    const { appPrefix, ...rest } = this.base;
    const killPoint = this.killPlan(this.index, incarnation);
    const config: RelayConfig = { ...rest, index: this.index, incarnation, journal, applicationName: `${appPrefix}-${this.index}`, killPoint };
    const entry: Incarnation = { slot: this.index, incarnation, name, journal, killPoint, process: new RoleProcess(name, config, this.secrets, this.outDir) };
    this.incarnations.push(entry);
    void entry.process.exited.then((exit) => {
      this.onExit(entry, exit);
      if (!this.#closed) setTimeout(() => !this.#closed && this.current === undefined && this.start(), this.restartDelayMs);
    });
    return entry;
  }

  /** A relay joins in this slot (again): started unless one runs, and restarted after a death from now on. */
  join(): Incarnation {
    this.#closed = false;
    return this.current ?? this.start();
  }

  /** The slot's relay leaves for good (no restart): `SIGTERM` stops it gracefully, `SIGKILL` does not. */
  async leave(signal: 'SIGTERM' | 'SIGKILL'): Promise<RoleExit | undefined> {
    this.#closed = true;
    return this.current?.process.stop(signal);
  }

  /** No more restarts; the running incarnation stops gracefully. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.incarnations.map((i) => i.process.stop('SIGTERM')));
  }
}
