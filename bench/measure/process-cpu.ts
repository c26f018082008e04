import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** One process from /proc/<pid>/stat: its parent, its own CPU (user + system) and its reaped children's, in µs. */
export interface ProcStat {
  readonly ppid: number;
  readonly cpu: number;
  readonly reapedChildren: number;
}

export function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const us = (i: number) => (Number(fields[i]) * 1e6) / TICKS_PER_SECOND;
    return { ppid: Number(fields[1]), cpu: us(11) + us(12), reapedChildren: us(13) + us(14) };
  } catch {
    return undefined;
  }
}

/** A process's own CPU (user + system, all threads) in µs, 10 ms ticks; NaN once it is gone. */
export function processCpu(pid: number): number {
  return procStat(pid)?.cpu ?? Number.NaN;
}

/** The oldest process of that exact name (pgrep -o -x), e.g. beam.smp or nats-server; undefined if none is visible. */
export function pidOf(name: string): number | undefined {
  try {
    const pid = Number(execFileSync('pgrep', ['-o', '-x', name], { encoding: 'utf8' }).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The local TCP ports of a process's sockets (from its fds and /proc/net/tcp{,6}): its database connections' client ports. */
export function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match !== null) inodes.add(match[1] as string);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9] as string)) ports.add(Number.parseInt((cols[1] as string).split(':')[1] as string, 16));
    }
  }
  return ports;
}

/** PostgreSQL's CPU over a window, split by who spent it (µs). */
export interface PostgresCpu {
  /** Every process of the server (postmaster, live children, children reaped meanwhile) minus `excluded`. */
  readonly total: number;
  /** The backends serving the measured process (by their client port). */
  readonly relayBackends: number;
  /** Of those, the backends whose `application_name` is the one `stop()` was given (0 without one). */
  readonly namedBackends: number;
  /** What children that ended during the window spent in it (postmaster's cutime + cstime, less their CPU before it): autovacuum workers, sessions of anyone. */
  readonly reaped: number;
  /** Live backends of other sessions (other test suites on the shared server) and the bench's own admin session: left out of `total`. */
  readonly excluded: number;
  readonly otherSessions: number;
}

interface Sample {
  readonly server: number;
  readonly reaped: number;
  readonly byPid: ReadonlyMap<number, number>;
}

/**
 * The CPU of the PostgreSQL server this client talks to, from /proc (the server must run on this machine, in this
 * pid namespace): the postmaster is the parent of the admin session's backend; its live children are read one by
 * one and its reaped children from its own cutime/cstime, so backends and autovacuum workers that ended during
 * the window count too. `start()` then `stop(relayPid)`: the backends whose client port belongs to `relayPid` are
 * the relay's; live client backends of anyone else (other test suites) and the admin session are left out, as far
 * as they are still alive at `stop()` (those that ended meanwhile are in `reaped` and cannot be told apart).
 * Null when the server's processes are not visible.
 */
export class PostgresCpuMeter {
  readonly #admin: pg.Client;
  #postmaster: number | undefined;
  #adminPid: number | undefined;
  #before: Sample | undefined;

  private constructor(admin: pg.Client) {
    this.#admin = admin;
  }

  static async open(admin: pg.Client): Promise<PostgresCpuMeter | null> {
    const meter = new PostgresCpuMeter(admin);
    const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    meter.#adminPid = rows[0]?.pid;
    const backend = meter.#adminPid === undefined ? undefined : procStat(meter.#adminPid);
    if (backend === undefined) return null;
    meter.#postmaster = backend.ppid;
    return meter.#sample() === undefined ? null : meter;
  }

  #sample(): Sample | undefined {
    const postmaster = this.#postmaster as number;
    const own = procStat(postmaster);
    if (own === undefined) return undefined;
    const byPid = new Map<number, number>();
    let children: number[];
    try {
      children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      children = readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => procStat(pid)?.ppid === postmaster);
    }
    let server = own.cpu + own.reapedChildren;
    for (const pid of children) {
      const child = procStat(pid);
      if (child === undefined) continue;
      byPid.set(pid, child.cpu + child.reapedChildren);
      server += child.cpu + child.reapedChildren;
    }
    return { server, reaped: own.reapedChildren, byPid };
  }

  start(): void {
    this.#before = this.#sample();
  }

  async stop(relayPid: number | undefined, applicationName?: string): Promise<PostgresCpu> {
    const after = this.#sample();
    const before = this.#before;
    if (after === undefined || before === undefined) throw new Error('PostgreSQL CPU: the postmaster went away');
    const ports = relayPid === undefined ? new Set<number>() : localPortsOf(relayPid);
    const { rows } = await this.#admin.query<{ pid: number; port: number | null; name: string }>(
      "SELECT pid, client_port AS port, application_name AS name FROM pg_stat_activity WHERE backend_type = 'client backend'",
    );
    const delta = (pid: number) => (after.byPid.get(pid) ?? 0) - (before.byPid.get(pid) ?? 0);
    let relayBackends = 0;
    let namedBackends = 0;
    let excluded = 0;
    let otherSessions = 0;
    for (const { pid, port, name } of rows) {
      if (port !== null && ports.has(port)) {
        relayBackends += delta(pid);
        if (applicationName !== undefined && name === applicationName) namedBackends += delta(pid);
      } else {
        excluded += delta(pid);
        if (pid !== this.#adminPid) otherSessions++;
      }
    }
    // A child reaped meanwhile moved its whole life's CPU into cutime: what it had spent before `start()` is not the window's.
    let endedBefore = 0;
    for (const [pid, cpu] of before.byPid) if (!after.byPid.has(pid)) endedBefore += cpu;
    return {
      total: after.server - before.server - excluded,
      relayBackends,
      namedBackends,
      reaped: after.reaped - before.reaped - endedBefore,
      excluded,
      otherSessions,
    };
  }
}
