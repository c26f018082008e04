import { cancelResize, resizePartitions, type ResizeProgress } from '../../../stores/postgres/engine/resize-partitions.js';
import { switchEngine, type SwitchProgress } from '../../../stores/postgres/engine/switch-engine.js';
import type { PgDatabase } from '../../../stores/postgres/database.js';
import type { TableName } from '../../../stores/postgres/sql.js';
import type { CliIo } from '../io.js';
import type { MigrateSettings } from '../migrate-settings.js';

/** A scan or a wait reports every batch or poll; a person needs a line every few seconds, and the last one. */
const PROGRESS_EVERY_MS = 2000;

function progressPrinter(io: CliIo) {
  let last = Number.NEGATIVE_INFINITY;
  return (line: string, always = false) => {
    const now = performance.now();
    if (!always && now - last < PROGRESS_EVERY_MS) return;
    last = now;
    io.err(`outboxer migrate: ${line}\n`);
  };
}

function describeSwitchProgress(progress: SwitchProgress): [string, boolean] {
  if (progress.step === 'lock') return [`a lock on the table was not granted in time (attempt ${progress.attempt}); trying again`, true];
  return [`scanned ${progress.scanned} pending rows (${progress.scheduled} backoffs given due_at)`, false];
}

function describeResizeProgress(progress: ResizeProgress): [string, boolean] {
  switch (progress.step) {
    case 'indexes':
      return [`building the partition indexes for ${progress.partitions} partitions (CONCURRENTLY)`, true];
    case 'waiting':
      return [`waiting for ${progress.relays} relay(s) to give back ${progress.held} partition(s) (${Math.round(progress.waitedMs / 1000)} s so far)`, false];
    case 'switched':
      return [`moved to ${progress.partitions} partitions, generation ${progress.generation}`, true];
    case 'dropped':
      return [progress.indexes.length === 0 ? 'no old partition index to drop' : `dropped the old partition indexes ${progress.indexes.join(', ')}`, true];
  }
}

async function switchTo(database: PgDatabase, tableName: TableName, engine: 'v1' | 'v2', lock: MigrateSettings['lock'], io: CliIo, name: string): Promise<void> {
  const print = progressPrinter(io);
  const result = await switchEngine(database, tableName, { engine, ...lock, onProgress: (progress) => print(...describeSwitchProgress(progress)) });
  if (!result.changed) {
    io.out(`${name} already runs engine ${engine}; nothing to do\n`);
  } else if (result.engine === 'v1') {
    io.out(`${name} switched back to engine v1: the fence triggers are dropped and every partition is free; start the relays of the older outboxer (this version's relays run engine v2 only and wait on it)\n`);
  } else {
    const fence = result.fenceUntil === null ? 'now' : `from ${result.fenceUntil.toISOString()}`;
    io.out(
      `${name} switched to engine v2: scanned ${result.scanned} pending rows (${result.leased} leased by v1 relays, ${result.scheduled} backoffs given due_at); v2 relays get partitions ${fence}\n`,
    );
  }
}

async function resizeTo(database: PgDatabase, tableName: TableName, settings: MigrateSettings & { partitions: number }, io: CliIo, name: string): Promise<void> {
  const print = progressPrinter(io);
  const result = await resizePartitions(database, tableName, {
    partitions: settings.partitions,
    ...settings.lock,
    ...(settings.resizeTimeoutMs === undefined ? {} : { waitTimeoutMs: settings.resizeTimeoutMs }),
    onProgress: (progress) => print(...describeResizeProgress(progress)),
  });
  if (!result.changed) io.out(`${name} already has ${result.to} partitions; nothing to do\n`);
  else {
    const resumed = result.resumed ? ' (finished a resize that had been left waiting)' : '';
    io.out(`${name} resized from ${result.from} to ${result.to} partitions${resumed}; generation ${result.generation}\n`);
  }
}

/**
 * The engine steps of `outboxer migrate`, after the migrations: a cancel, a resize and a switch, as asked. A resize
 * goes while the table is at v1 (nothing holds a partition then, so it does not wait): before a switch to v2,
 * after a switch back. Each step is the store's, idempotent; a refusal ends the command with its code (exit 1).
 */
export async function changeEngine(database: PgDatabase, tableName: TableName, settings: MigrateSettings, io: CliIo): Promise<void> {
  const name = `${tableName.schema}.${tableName.table}`;
  if (settings.cancelResize) {
    const { cancelled, droppedIndexes } = await cancelResize(database, tableName);
    const dropped = droppedIndexes.length === 0 ? '' : ` (dropped ${droppedIndexes.join(', ')})`;
    io.out(cancelled === null ? `${name} has no resize waiting; nothing to cancel${dropped}\n` : `${name}: cancelled the resize to ${cancelled} partitions; grants are open again${dropped}\n`);
  }
  const { partitions, engine } = settings;
  const resize = partitions === undefined ? undefined : () => resizeTo(database, tableName, { ...settings, partitions }, io, name);
  if (engine === 'v2' && resize !== undefined) await resize();
  if (engine !== undefined) await switchTo(database, tableName, engine, settings.lock, io, name);
  if (engine !== 'v2' && resize !== undefined) await resize();
}
