/**
 * One relay's leases in a process of its own, on a SQLite file shared with other processes
 * (test/integration/sqlite-two-processes.test.ts): `node --import tsx sqlite-lease-child.ts <file> <name> <leaseMs>`.
 * Every 100 ms it beats, gives back what is above its fair share (ceil(64 / live relays), highest first) and
 * acquires up to it. It prints one JSON line per event: `joined`, `granted` (each grant), `released`, `held`
 * (after every step). It exits 3 when its lease ran out.
 */
import Database from 'better-sqlite3';
import { prepareConnection, SqliteDatabase } from '../../src/stores/sqlite/database.js';
import { SqliteRelayLeases } from '../../src/stores/sqlite/leases/sqlite-relay-leases.js';
import { sqliteTableNames } from '../../src/stores/sqlite/table-names.js';

const [path, name, leaseMs] = process.argv.slice(2);
if (path === undefined || name === undefined || leaseMs === undefined) throw new Error('usage: sqlite-lease-child.ts <file> <name> <leaseMs>');
const handle = new Database(path);
prepareConnection(handle);
const leases = new SqliteRelayLeases(new SqliteDatabase(handle), sqliteTableNames('outbox'));
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);

const { relayId } = await leases.join({ name, leaseMs: Number(leaseMs) });
say({ event: 'joined', relayId });
for (;;) {
  const membership = await leases.heartbeat(relayId);
  if (!membership.alive) {
    say({ event: 'dead' });
    process.exit(3);
  }
  const live = membership.relays.filter((r) => !r.leaving).length;
  const share = Math.ceil(membership.config.partitionCount / Math.max(1, live));
  let held = membership.owned.map((p) => p.partition);
  if (held.length > share) {
    const extra = membership.owned.slice(share);
    await leases.release(relayId, extra);
    say({ event: 'released', partitions: extra.map((p) => p.partition) });
    held = held.slice(0, share);
  } else if (held.length < share && membership.config.grantsOpen) {
    for (const grant of await leases.acquire(relayId, share - held.length)) {
      say({ event: 'granted', ...grant });
      held.push(grant.partition);
    }
  }
  say({ event: 'held', partitions: held.sort((a, b) => a - b) });
  await new Promise((resolve) => setTimeout(resolve, 100));
}
