import type { PartitionEngine, ResizeProgress } from '../../../core/ports/partition-engine.js';
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

async function resizeTo(engine: PartitionEngine, settings: MigrateSettings & { partitions: number }, io: CliIo, name: string): Promise<void> {
  const print = progressPrinter(io);
  const result = await engine.resize({
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
 * The partition steps of `outboxer migrate`, after the migrations: a cancel and a resize, as asked. Each step is
 * the store's, idempotent; a refusal ends the command with its code (exit 1).
 */
export async function changePartitions(engine: PartitionEngine, name: string, settings: MigrateSettings, io: CliIo): Promise<void> {
  if (settings.cancelResize) {
    const { cancelled, droppedIndexes } = await engine.cancelResize();
    const dropped = droppedIndexes.length === 0 ? '' : ` (dropped ${droppedIndexes.join(', ')})`;
    io.out(
      cancelled === null
        ? `${name} has no resize waiting; nothing to cancel${dropped}\n`
        : `${name}: cancelled the resize to ${cancelled} partitions; grants are open again${dropped}\n`,
    );
  }
  const { partitions } = settings;
  if (partitions !== undefined) await resizeTo(engine, { ...settings, partitions }, io, name);
}
