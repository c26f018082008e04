import type { PartitionMessage } from '../../core/ports.js';

/**
 * The order `PartitionReadResult.messages` promises: by partition, then by seq (decimal strings of bigints, so the
 * shorter is the smaller). Readers sort in the relay's process rather than in the database: the database would sort
 * whole rows, bodies included, on its own CPU, which every relay of a table shares.
 */
export function byPartitionAndSeq(a: PartitionMessage, b: PartitionMessage): number {
  if (a.partition !== b.partition) return a.partition - b.partition;
  return a.seq.length - b.seq.length || (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0);
}
