/**
 * How far V8 lets the old generation of the `outboxer` process grow past what a full collection left live, in
 * percent (V8's `--heap-growing-percent`): 100, at most twice the live heap.
 *
 * V8's own factor for a heap that may reach gigabytes goes up to 4. A relay's live heap is small (about 15 MB
 * draining a backlog: its modules and the batches in flight), but scavenges promote the batches that are still
 * publishing, so between two full collections its old generation filled with dead batches up to four times that
 * before one ran. At twice, a relay draining 100,000 messages peaked at about 127 MB instead of about 162 MB
 * (BENCHMARKS.md, "Relay memory"), with the same CPU per message within the run's noise: a full collection of a
 * 15 MB heap is cheap next to the scavenges every drain pays anyway.
 */
export const HEAP_GROWING_PERCENT = 100;

const HEAP_GROWING_FLAG = /--heap[-_]growing[-_]percent\b/;

/**
 * The V8 flag the `outboxer` executable sets for itself, or undefined when the operator chose the growth already
 * (`node --heap-growing-percent=… outboxer`, or in `NODE_OPTIONS`): theirs wins.
 */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | undefined {
  if (execArgv.some((arg) => HEAP_GROWING_FLAG.test(arg)) || HEAP_GROWING_FLAG.test(nodeOptions ?? '')) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}
