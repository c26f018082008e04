import { describe, expect, it } from 'vitest';
import type { PartitionMessage } from '../../../src/core/ports.js';
import { splitWaiting } from '../../../src/core/partition-relay/publish-plan.js';
import { seeded } from '../../support/seeded-random.js';
import { partitionMessage } from './partition-messages.js';

/** A read of up to 3 partitions: keys live in one partition each, some rows scheduled, later rows flagged as waiting. */
function generate(random: () => number): PartitionMessage[] {
  const messages: PartitionMessage[] = [];
  const scheduled = new Map<string, string[]>();
  for (let seq = 1; seq <= Math.floor(random() * 30); seq++) {
    const key = random() < 0.2 ? null : `k${Math.floor(random() * 5)}`;
    const partition = key === null ? Math.floor(random() * 3) : Number(key.slice(1)) % 3;
    const earlier = key === null ? [] : (scheduled.get(key) ?? []);
    const blocker = earlier[0];
    const waitsFor = blocker === undefined ? null : { seq: blocker, dueInMs: Math.floor(random() * 1000) };
    const isScheduled = key !== null && random() < 0.3;
    if (isScheduled) scheduled.set(key, [...earlier, String(seq)]);
    // a scheduled row may be missing from the read (not due yet): the rows flagged behind it stay in
    if (isScheduled && random() < 0.4) continue;
    messages.push(partitionMessage(seq, { key, partition, waitsFor, source: isScheduled ? 'due' : 'fresh' }));
  }
  return messages;
}

describe('splitWaiting over random reads', () => {
  it('never lets a message go before its blocker, nor after a held message of its key; holds and ready cover the read once', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const random = seeded(seed);
      const messages = generate(random);
      const dueFull = (message: { readonly partition: number }) => (seed + message.partition) % 4 === 0;
      const { ready, held } = splitWaiting(messages, dueFull);
      expect([...ready.map((r) => r.id), ...held.map((h) => h.id)].sort()).toEqual(messages.map((r) => r.id).sort());
      const readySeqs = new Map<string, string[]>();
      for (const message of ready) {
        if (message.key === null) continue;
        const before = readySeqs.get(message.key) ?? [];
        if (message.waitsFor !== null) {
          expect(before).toContain(message.waitsFor.seq);
          // a due row comes with every due row below it; a fresh one may have had some cut off a full due branch
          if (message.source !== 'due') expect(dueFull(message)).toBe(false);
        }
        readySeqs.set(message.key, [...before, message.seq]);
      }
      const heldIds = new Set(held.map((h) => h.id));
      for (const key of new Set(messages.map((r) => r.key))) {
        const ofKey = messages.filter((r) => r.key === key && key !== null);
        const firstHeld = ofKey.findIndex((r) => heldIds.has(r.id));
        if (firstHeld >= 0) expect(ofKey.slice(firstHeld).every((r) => heldIds.has(r.id))).toBe(true);
      }
    }
  });
});

describe('splitWaiting with a full due branch', () => {
  it("lets a key's due rows go out one after another in one batch, and holds a fresh row behind them", () => {
    const due = [1, 2, 3].map((seq) =>
      partitionMessage(seq, { key: 'k', partition: 0, source: 'due', waitsFor: seq === 1 ? null : { seq: String(seq - 1), dueInMs: 0 } }),
    );
    const fresh = partitionMessage(9, { key: 'k', partition: 0, source: 'fresh', waitsFor: { seq: '3', dueInMs: 0 } });
    const { ready, held } = splitWaiting([...due, fresh], () => true);
    expect(ready.map((m) => m.seq)).toEqual(['1', '2', '3']);
    expect(held.map((h) => h.id)).toEqual([fresh.id]);
  });
});
