import type { PartitionMessage } from '../../../src/core/ports.js';

/** A pending message as a partition read returns it; `seq` also makes the id. */
export function partitionMessage(seq: number, fields: Partial<PartitionMessage> = {}): PartitionMessage {
  return {
    id: `00000000-0000-7000-8000-${seq.toString(16).padStart(12, '0')}`,
    seq: String(seq),
    topic: 't',
    type: 'x',
    key: null,
    body: '{}',
    contentType: 'application/json',
    headers: {},
    createdAt: new Date(0),
    attempts: 1,
    lastError: null,
    partition: 0,
    source: 'fresh',
    waitsFor: null,
    ...fields,
  };
}
