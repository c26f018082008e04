import { describe, expect, it } from 'vitest';
import type { DestinationPause, Logger, PartitionMessage, PartitionReader, TopicPause } from '../../../src/core/ports.js';
import { Destinations } from '../../../src/core/destinations.js';
import { OperatorPauseRefresh } from '../../../src/core/partition-relay/operator-pause-refresh.js';
import { adoptEntry, type PartitionEntry } from '../../../src/core/partition-relay/partition-book.js';
import { publishBatch } from '../../../src/core/partition-relay/publish-batch.js';
import { operatorHolds } from '../../../src/core/partition-relay/publish-plan.js';
import { PublishWindow } from '../../../src/core/publish-window.js';
import { resolveRelayOptions } from '../../../src/core/relay-options.js';
import { TopicPauses } from '../../../src/core/topic-pauses.js';
import { RecordingPublisher } from '../../support/recording-publisher.js';
import { partitionMessage } from './partition-messages.js';

const options = resolveRelayOptions({ leaseMs: 6000, publishTimeoutMs: 1000, errorBackoffMs: 500, maxErrorBackoffMs: 4000 });

/** A reader port that only counts attempts (the relay's batches call nothing else of it). */
function countingReader(): PartitionReader & { counted: string[] } {
  const counted: string[] = [];
  return {
    counted,
    read: async () => {
      throw new Error('not read in these tests');
    },
    complete: async () => [],
    countAttempt: async (_relayId, _lease, id) => {
      counted.push(id);
      return true;
    },
  };
}

function batch(
  messages: readonly PartitionMessage[],
  pauses: TopicPauses,
  entries: Map<number, PartitionEntry>,
  reader = countingReader(),
  publisher = new RecordingPublisher(),
  destinations?: Destinations,
) {
  return publishBatch(messages, entries, {
    relayId: 'relay',
    publisher,
    reader,
    options,
    pauses,
    publishDeadline: performance.now() + 60_000,
    isStopping: () => false,
    limitOf: () => 100,
    statementMs: 2000,
    permits: new PublishWindow(64).permits(0),
    ...(destinations === undefined ? {} : { destinations }),
  });
}

const entryOf = (partition: number, unclean = 0) => new Map([[partition, adoptEntry({ partition, epoch: '1', unclean })]]);

describe('a relay batch under an operator pause', () => {
  it('holds the paused topic and the rest of its keys uncounted with the reason, publishes nothing of it, and lets other keys go', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([{ topic: 'paused', reason: 'consumer down' }], performance.now());
    const messages = [
      partitionMessage(1, { topic: 'paused', key: 'k' }),
      partitionMessage(2, { topic: 'flowing', key: 'k' }), // behind a held message of its key: held too
      partitionMessage(3, { topic: 'flowing', key: 'j' }),
      partitionMessage(4, { topic: 'paused', key: null }),
      partitionMessage(5, { topic: 'flowing', key: null }),
    ];
    const publisher = new RecordingPublisher();
    const { results } = await batch(messages, pauses, entryOf(0), countingReader(), publisher);
    expect(publisher.delivered.map((m) => m.seq)).toEqual(['3', '5']);
    const [completion] = results.map((r) => r.completion);
    expect([...(completion?.published ?? [])].sort()).toEqual([messages[2]?.id, messages[4]?.id].sort());
    expect(completion?.failed).toEqual([]);
    expect(completion?.held.map((h) => h.id).sort()).toEqual([messages[0]?.id, messages[1]?.id, messages[3]?.id].sort());
    for (const held of completion?.held ?? []) {
      expect(held.reason).toBe('paused by an operator: consumer down');
      expect(held.delayMs).toBeGreaterThan(0);
      expect(held.delayMs).toBeLessThanOrEqual(options.errorBackoffMs);
    }
  });

  it('publishes the topic again once the operator list no longer names it', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([{ topic: 'paused', reason: '' }], performance.now());
    pauses.setOperatorPauses([], performance.now());
    const publisher = new RecordingPublisher();
    const { results } = await batch([partitionMessage(1, { topic: 'paused', key: 'k' })], pauses, entryOf(0), countingReader(), publisher);
    expect(publisher.delivered).toHaveLength(1);
    expect(results[0]?.completion.held).toEqual([]);
  });

  it('counts no attempt for a paused message in a partition whose owners keep dying (it is not published)', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([{ topic: 'paused', reason: '' }], performance.now());
    const reader = countingReader();
    const messages = [partitionMessage(1, { topic: 'flowing', key: 'a' }), partitionMessage(2, { topic: 'paused', key: 'b' })];
    const { results } = await batch(messages, pauses, entryOf(0, 3), reader);
    expect(reader.counted).toEqual([messages[0]?.id]);
    expect(results[0]?.completion.held.map((h) => h.id)).toEqual([messages[1]?.id]);
  });
});

describe('a relay batch under an operator pause of a whole destination', () => {
  function fanOut() {
    const own = new RecordingPublisher();
    const partner = new RecordingPublisher();
    return { own, partner, destinations: new Destinations(own, { partner: { publisher: partner } }) };
  }

  it('holds every topic of the paused destination uncounted with the reason, before any other check, while the other destination flows', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([], performance.now(), [{ destination: 'partner', reason: 'partner maintenance' }]);
    const { own, partner, destinations } = fanOut();
    const messages = [
      partitionMessage(1, { topic: 'orders', key: 'k', destination: 'partner' }),
      partitionMessage(2, { topic: 'orders', key: 'k', destination: null }), // same key, other destination: independent
      partitionMessage(3, { topic: 'billing', key: 'k', destination: 'partner' }), // behind a held message of its key and destination
      partitionMessage(4, { topic: 'billing', key: null, destination: 'partner', attempts: 99 }), // attempts used up: held, not parked
      partitionMessage(5, { topic: 'billing', key: null, destination: 'default' }), // `default` written by plain SQL is the relay's own
    ];
    const { results, outcome } = await batch(messages, pauses, entryOf(0), countingReader(), own, destinations);
    expect(partner.delivered).toEqual([]);
    expect(own.delivered.map((m) => m.seq)).toEqual(['2', '5']);
    const [completion] = results.map((r) => r.completion);
    expect(completion?.failed).toEqual([]);
    expect(completion?.held.map((h) => h.id).sort()).toEqual([messages[0]?.id, messages[2]?.id, messages[3]?.id].sort());
    for (const held of completion?.held ?? []) {
      expect(held.reason).toBe('paused by an operator: partner maintenance');
      expect(held.delayMs).toBeLessThanOrEqual(options.errorBackoffMs);
    }
    expect(outcome.topicEvents).toEqual([]); // an operator's pause is logged by the refresh, not per batch
  });

  it('holds rows without a destination under a pause of `default`, and a destination this relay lacks under its own pause', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([], performance.now(), [
      { destination: 'default', reason: '' },
      { destination: 'ledger', reason: 'closing the books' },
    ]);
    const { own, partner, destinations } = fanOut();
    const messages = [
      partitionMessage(1, { topic: 'orders', key: 'a', destination: null }),
      partitionMessage(2, { topic: 'orders', key: 'a', destination: 'partner' }),
      partitionMessage(3, { topic: 'orders', key: 'b', destination: 'ledger' }),
    ];
    const { results } = await batch(messages, pauses, entryOf(0), countingReader(), own, destinations);
    expect(own.delivered).toEqual([]);
    expect(partner.delivered.map((m) => m.seq)).toEqual(['2']);
    const held = new Map(results[0]?.completion.held.map((h) => [h.id, h.reason]));
    expect(held).toEqual(
      new Map([
        [messages[0]?.id, 'paused by an operator'],
        [messages[2]?.id, 'paused by an operator: closing the books'],
      ]),
    );
  });

  it('counts no attempt for a message of a paused destination in a partition whose owners keep dying', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([], performance.now(), [{ destination: 'partner', reason: '' }]);
    const reader = countingReader();
    const { own, destinations } = fanOut();
    const messages = [partitionMessage(1, { key: 'a', destination: null }), partitionMessage(2, { key: 'b', destination: 'partner' })];
    const { results } = await batch(messages, pauses, entryOf(0, 3), reader, own, destinations);
    expect(reader.counted).toEqual([messages[0]?.id]);
    expect(results[0]?.completion.held.map((h) => h.id)).toEqual([messages[1]?.id]);
  });

  it('publishes the destination again, in key order, once the operator list no longer names it', async () => {
    const pauses = new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs);
    pauses.setOperatorPauses([], performance.now(), [{ destination: 'partner', reason: '' }]);
    pauses.setOperatorPauses([], performance.now(), []);
    const { own, partner, destinations } = fanOut();
    const messages = [1, 2, 3].map((seq) => partitionMessage(seq, { key: 'k', destination: 'partner' }));
    const { results } = await batch(messages, pauses, entryOf(0), countingReader(), own, destinations);
    expect(partner.delivered.map((m) => m.seq)).toEqual(['1', '2', '3']);
    expect(results[0]?.completion.held).toEqual([]);
  });

  it('gives waiting messages of a paused destination its reason and at least its window', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.setOperatorPauses([], 0, [{ destination: 'partner', reason: 'r' }]);
    const messages = [partitionMessage(1, { key: 'k', destination: 'partner' }), partitionMessage(2, { key: 'k', destination: null })];
    const waiting = messages.map((m) => ({ id: m.id, partition: 0, delayMs: 50, reason: 'waits for an earlier message' }));
    expect(operatorHolds(waiting, messages, pauses, 100)).toEqual([{ ...waiting[0], delayMs: 400, reason: 'paused by an operator: r' }, waiting[1]]);
  });
});

describe('operatorHolds', () => {
  it('gives waiting messages of a paused topic its reason and at least its window, and leaves the others as they were', () => {
    const pauses = new TopicPauses(500, 4000);
    pauses.setOperatorPauses([{ topic: 'paused', reason: 'r' }], 0);
    const messages = [
      partitionMessage(1, { topic: 'paused', key: 'k' }),
      partitionMessage(2, { topic: 'other', key: 'j' }),
      partitionMessage(3, { topic: 'paused', key: 'm' }),
    ];
    const waiting = [
      { id: messages[0]?.id as string, partition: 0, delayMs: 50, reason: 'waits for an earlier message' },
      { id: messages[1]?.id as string, partition: 0, delayMs: 50, reason: 'waits for an earlier message' },
      { id: messages[2]?.id as string, partition: 0, delayMs: 9000, reason: 'waits for an earlier message' },
    ];
    expect(operatorHolds(waiting, messages, pauses, 100)).toEqual([
      { ...waiting[0], delayMs: 400, reason: 'paused by an operator: r' },
      waiting[1],
      { ...waiting[2], delayMs: 9000, reason: 'paused by an operator: r' }, // never earlier than its blocker
    ]);
  });
});

describe('OperatorPauseRefresh', () => {
  const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

  function source(lists: (readonly TopicPause[] | Error)[]) {
    let calls = 0;
    const reader: PartitionReader = {
      ...countingReader(),
      pausedTopics: async () => {
        const next = lists[Math.min(calls++, lists.length - 1)];
        if (next instanceof Error) throw next;
        return next ?? [];
      },
    };
    return { reader, calls: () => calls };
  }
  const pause = (topic: string): TopicPause => ({ topic, reason: 'r', pausedAt: new Date(0) });

  it('reads at once, then not again within the period; a failed read throws and is tried again at the next call', async () => {
    const pauses = new TopicPauses(500, 4000);
    const { reader, calls } = source([[pause('a')], new Error('connection reset'), [pause('b')]]);
    const logged: string[] = [];
    const logger: Logger = {
      ...quiet,
      warn: (fields) => logged.push(`paused ${String(fields.topic)}`),
      info: (fields) => logged.push(`resumed ${String(fields.topic)}`),
    };
    const refresh = new OperatorPauseRefresh(reader, pauses, { periodMs: 60_000, statementMs: 1000 }, { logger, owner: 'me' });
    await refresh.refreshIfDue(performance.now());
    expect(pauses.topics()).toEqual(['a']);
    await refresh.refreshIfDue(performance.now());
    expect(calls()).toBe(1);
    await expect(refresh.refreshIfDue(performance.now() + 60_001)).rejects.toThrow('connection reset');
    expect(pauses.topics()).toEqual(['a']); // the last list stands until a read succeeds
    await refresh.refreshIfDue(performance.now() + 60_001);
    expect(calls()).toBe(3);
    expect(pauses.topics()).toEqual(['b']);
    expect(logged).toEqual(['paused a', 'resumed a', 'paused b']);
  });

  it('reads the destination pauses in the same period and logs them apart from topic pauses', async () => {
    const pauses = new TopicPauses(500, 4000);
    let listed: readonly DestinationPause[] = [{ destination: 'partner', reason: 'maintenance', pausedAt: new Date(0) }];
    const reader: PartitionReader = { ...countingReader(), pausedTopics: async () => [pause('a')], destinationPauses: async () => listed };
    const logged: string[] = [];
    const logger: Logger = {
      ...quiet,
      warn: (fields, message) => logged.push(`${String(fields.destination ?? fields.topic)} ${message.split(':')[0] as string}`),
      info: (fields, message) => logged.push(`${String(fields.destination ?? fields.topic)} ${message.split(':')[0] as string}`),
    };
    const refresh = new OperatorPauseRefresh(reader, pauses, { periodMs: 1, statementMs: 1000 }, { logger, owner: 'me' });
    await refresh.refreshIfDue(performance.now());
    expect(pauses.isOperatorPaused('*@partner')).toBe(true);
    expect(pauses.pausedDestinations(performance.now())).toEqual(['partner']);
    listed = [];
    await refresh.refreshIfDue(performance.now() + 10);
    expect(pauses.pausedDestinations(performance.now())).toEqual([]);
    expect(logged).toEqual(['partner destination paused by an operator', 'a topic paused by an operator', 'partner destination resumed by an operator']);
  });

  it('reads nothing from a store without operator pauses', async () => {
    const pauses = new TopicPauses(500, 4000);
    const refresh = new OperatorPauseRefresh(countingReader(), pauses, { periodMs: 1, statementMs: 1000 }, { logger: quiet, owner: 'me' });
    await refresh.refreshIfDue(performance.now());
    expect(pauses.topics()).toEqual([]);
  });
});
