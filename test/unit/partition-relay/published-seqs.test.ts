import { describe, expect, it } from 'vitest';
import type { PartitionReader } from '../../../src/core/ports.js';
import { adoptEntry } from '../../../src/core/partition-relay/partition-book.js';
import { publishBatch } from '../../../src/core/partition-relay/publish-batch.js';
import { seqsById, uncounted, withPublishedSeqs } from '../../../src/core/partition-relay/publish-plan.js';
import { PublishWindow } from '../../../src/core/publish-window.js';
import { resolveRelayOptions } from '../../../src/core/relay-options.js';
import { TopicPauses } from '../../../src/core/topic-pauses.js';
import { RecordingPublisher } from '../../support/recording-publisher.js';
import { partitionMessage as m } from './partition-messages.js';

const options = resolveRelayOptions({ leaseMs: 6000, publishTimeoutMs: 1000, errorBackoffMs: 500, maxErrorBackoffMs: 4000 });

describe('withPublishedSeqs: the store takes published rows by the seq the read returned', () => {
  it('adds the seq of each published id, in the order of `published`', () => {
    const [a, b, c] = [m(7), m(3), m(12)];
    const completion = { partition: 0, epoch: '1', published: [c.id, a.id], failed: [], held: [{ id: b.id, delayMs: 50, reason: null }] };
    expect(withPublishedSeqs(completion, seqsById([a, b, c]))).toEqual({ ...completion, publishedSeqs: ['12', '7'] });
  });

  it('leaves a completion without published rows, or with one whose message is not in the batch, as it is (found by id)', () => {
    const a = m(1);
    const none = { partition: 0, epoch: '1', published: [], failed: [{ id: a.id, error: 'nack', retryInMs: 10 }], held: [] };
    expect(withPublishedSeqs(none, seqsById([a]))).toBe(none);
    const stranger = { partition: 0, epoch: '1', published: [a.id, m(2).id], failed: [], held: [] };
    expect(withPublishedSeqs(stranger, seqsById([a]))).toBe(stranger);
  });

  it('keeps the seqs when a retried completion writes its failures as holds (uncounted)', () => {
    const [a, b] = [m(1), m(2)];
    const completion = withPublishedSeqs(
      { partition: 0, epoch: '1', published: [a.id], failed: [{ id: b.id, error: 'nack', retryInMs: 90 }], held: [] },
      seqsById([a, b]),
    );
    expect(uncounted(completion)).toMatchObject({ published: [a.id], publishedSeqs: ['1'], failed: [], held: [{ id: b.id, delayMs: 90 }] });
  });

  it('a relay batch completes each partition with the seqs of the messages it published', async () => {
    const messages = [m(4, { partition: 1 }), m(9, { partition: 2, key: 'k' }), m(11, { partition: 1 })];
    const reader: PartitionReader = {
      read: () => Promise.reject(new Error('not read here')),
      complete: () => Promise.resolve([]),
      countAttempt: () => Promise.resolve(true),
    };
    const { results } = await publishBatch(messages, new Map([1, 2].map((p) => [p, adoptEntry({ partition: p, epoch: '3', unclean: 0 })])), {
      relayId: 'relay',
      publisher: new RecordingPublisher(),
      reader,
      options,
      pauses: new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs),
      publishDeadline: performance.now() + 60_000,
      isStopping: () => false,
      limitOf: () => 100,
      statementMs: 2000,
      permits: new PublishWindow(64).permits(0),
    });
    const byPartition = new Map(results.map((r) => [r.completion.partition, r.completion]));
    expect(byPartition.get(1)).toMatchObject({ epoch: '3', published: [messages[0]?.id, messages[2]?.id], publishedSeqs: ['4', '11'] });
    expect(byPartition.get(2)).toMatchObject({ epoch: '3', published: [messages[1]?.id], publishedSeqs: ['9'] });
  });
});
