import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';
import { waitFor } from '../support/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LEASE_MS = 2000;

interface ChildEvent {
  readonly event: 'joined' | 'granted' | 'released' | 'held' | 'dead';
  readonly at: number;
  readonly relayId?: string;
  readonly partition?: number;
  readonly epoch?: string;
  readonly unclean?: number;
  readonly partitions?: number[];
}

/** A relay's leases in a Node process of its own (test/support/sqlite-lease-child.ts), with its events as they come. */
class LeaseChild {
  readonly events: ChildEvent[] = [];
  readonly child: ChildProcess;
  stderr = '';

  constructor(path: string, name: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sqlite-lease-child.ts', path, name, String(LEASE_MS)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line !== '') this.events.push(JSON.parse(line) as ChildEvent);
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  get relayId(): string | undefined {
    return this.events.find((e) => e.event === 'joined')?.relayId;
  }

  /** What it held after its last step. */
  get held(): readonly number[] {
    return this.events.findLast((e) => e.event === 'held')?.partitions ?? [];
  }

  grants(): ChildEvent[] {
    return this.events.filter((e) => e.event === 'granted');
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('close', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

describe('SQLite leases across two processes on one file', () => {
  let file: FreshSqliteFile | undefined;
  const children: LeaseChild[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await file?.cleanup();
    file = undefined;
  });

  it("splits the partitions between two relays, never granting one to both, and the survivor takes a killed one's partitions once its lease ran out", async () => {
    file = freshSqliteFile('two-processes');
    const database = file.database();
    await new SqliteOutboxStore(database).migrate();
    const owners = async () => {
      const rows = await database.read(() => database.all(`SELECT owner, count(*) AS n FROM "outbox_partitions" WHERE owner IS NOT NULL GROUP BY owner`));
      return new Map(rows.map((row) => [String(row.owner), Number(row.n)]));
    };
    const [a, b] = [new LeaseChild(file.path, 'relay-a'), new LeaseChild(file.path, 'relay-b')];
    children.push(a, b);
    const failed = () => [a, b].find((c) => c.child.exitCode !== null)?.stderr;

    await waitFor(
      () => {
        if (failed() !== undefined) throw new Error(`a child exited: ${failed()}`);
        return a.held.length === 32 && b.held.length === 32;
      },
      { timeoutMs: 30_000, what: 'both relays to hold 32 partitions each' },
    );
    expect(new Set([...a.held, ...b.held]).size).toBe(64);
    const split = await owners();
    expect(split.get(a.relayId ?? '')).toBe(32);
    expect(split.get(b.relayId ?? '')).toBe(32);
    // every grant raised the epoch: the same partition at the same epoch was never granted to both
    const granted = [...a.grants(), ...b.grants()].map((g) => `${g.partition}@${g.epoch}`);
    expect(new Set(granted).size).toBe(granted.length);

    // kill it right after a beat of its own, so its lease certainly still runs for a while
    const steps = b.events.length;
    await waitFor(() => b.events.slice(steps).some((e) => e.event === 'held'), { what: 'a fresh step of relay-b' });
    await b.kill();
    const killedAt = Date.now();
    const mine = new Set(b.held);
    const beats = b.events.filter((e) => e.event === 'held');
    // its last beat came after the step before its last one: its lease ran at least until then + LEASE_MS
    const lastBeatAfter = beats.at(-2)?.at ?? 0;
    expect(mine.size).toBe(32);
    expect((await owners()).get(b.relayId ?? '')).toBe(32);
    const takeovers = () => a.grants().filter((g) => g.at >= killedAt && mine.has(g.partition ?? -1));
    await waitFor(() => a.held.length === 64, { timeoutMs: 30_000, what: 'the survivor to hold every partition' });
    expect((await owners()).get(a.relayId ?? '')).toBe(64);
    const taken = takeovers();
    expect(taken.map((g) => g.partition).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual([...mine].sort((x, y) => x - y));
    expect(taken.every((g) => g.unclean === 1)).toBe(true);
    expect(Math.min(...taken.map((g) => g.at)) - lastBeatAfter).toBeGreaterThanOrEqual(LEASE_MS);
    await database.close();
  });
});
