/**
 * The engine v2 journal decorator of the chaos relay role, over a stub of our own PartitionReader port:
 * reads are journaled as claims under their lease (partition and epoch), completions as marks that are
 * full when applied and empty when fenced, so that the checker tells a fenced zombie's sends apart; rows the
 * store skipped are journaled apart, as `skip`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type IncarnationRecord, indexSends, type JournalEvent } from '../../chaos/attribution.js';
import { Journal, readJournal } from '../../chaos/journal.js';
import { faultingReader } from '../../chaos/roles/faulting-reader.js';
import type { PartitionMessage, PartitionReader } from '../../src/core/ports.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function message(id: string, partition: number): PartitionMessage {
  return { id, partition, source: 'fresh', waitsFor: null } as unknown as PartitionMessage;
}

const stub: PartitionReader = {
  read: async () => ({ horizon: '1', tag: '1', partitions: [], messages: [message('a', 3), message('b', 5)] }),
  // Partition 3 is still mine at epoch 7; partition 5 was granted to another relay (fenced).
  complete: async (_relay, completions) =>
    completions.map((c) => ({ partition: c.partition, epoch: c.epoch, applied: c.partition === 3, changed: c.partition === 3 ? 1 : 0, skipped: [] })),
  countAttempt: async () => true,
};

describe('chaos faulting reader (engine v2 journal)', () => {
  it('journals reads as claims per lease and completions as full or fenced marks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-reader-'));
    dirs.push(dir);
    const journal = new Journal(join(dir, 'relay.jsonl'));
    const tokens = new Map<string, string>();
    const reader = faultingReader(stub, journal, tokens, { at: 0 });
    await reader.read('r1', 64, [
      { partition: 3, epoch: '7', after: null, recheck: null, limit: 10 },
      { partition: 5, epoch: '2', after: null, recheck: null, limit: 10 },
    ]);
    expect(tokens).toEqual(
      new Map([
        ['a', 'p3e7r1'],
        ['b', 'p5e2r1'],
      ]),
    );
    journal.write({ e: 'send', id: 'a', tok: tokens.get('a') });
    journal.write({ e: 'send', id: 'b', tok: tokens.get('b') });
    await reader.complete('r1', [
      { partition: 3, epoch: '7', published: ['a'], failed: [], held: [] },
      { partition: 5, epoch: '2', published: ['b'], failed: [], held: [] },
    ]);
    journal.close();
    const incarnation: IncarnationRecord = { name: 'relay-0-0', exit: undefined, events: readJournal<JournalEvent>(join(dir, 'relay.jsonl')) };
    const sends = indexSends([incarnation]);
    expect(sends.get('a')?.[0]?.marked).toBe(true);
    expect(sends.get('b')?.[0]?.marked).toBe(false);
  });

  it('tells the sends of one lease apart by read: a row read again after a publish it could not finish leaves its first send unmarked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-reader-'));
    dirs.push(dir);
    const journal = new Journal(join(dir, 'relay.jsonl'));
    const tokens = new Map<string, string>();
    const reader = faultingReader(stub, journal, tokens, { at: 0 });
    const requests = [{ partition: 3, epoch: '7', after: null, recheck: null, limit: 10 }];
    await reader.read('r1', 64, requests);
    journal.write({ e: 'send', id: 'a', tok: tokens.get('a') });
    await reader.read('r1', 64, requests);
    journal.write({ e: 'send', id: 'a', tok: tokens.get('a') });
    await reader.complete('r1', [{ partition: 3, epoch: '7', published: ['a'], failed: [], held: [] }]);
    journal.close();
    const incarnation: IncarnationRecord = { name: 'relay-0-0', exit: undefined, events: readJournal<JournalEvent>(join(dir, 'relay.jsonl')) };
    expect(
      indexSends([incarnation])
        .get('a')
        ?.map((send) => [send.tok, send.marked]),
    ).toEqual([
      ['p3e7r1', false],
      ['p3e7r2', true],
    ]);
  });

  it('journals a row the completion skipped (locked by another session) apart: its send stays open to the end, the written rows of that read are marked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-reader-'));
    dirs.push(dir);
    const journal = new Journal(join(dir, 'relay.jsonl'));
    const tokens = new Map<string, string>();
    const given: unknown[] = [];
    const skipping: PartitionReader = {
      ...stub,
      read: async () => ({ horizon: '1', tag: '1', partitions: [], messages: [message('a', 3), message('c', 3)] }),
      complete: async (_relay, completions, options) => {
        given.push(options);
        return completions.map((c) => ({ partition: c.partition, epoch: c.epoch, applied: true, changed: 1, skipped: ['a'] }));
      },
    };
    const reader = faultingReader(skipping, journal, tokens, { at: 0 });
    await reader.read('r1', 64, [{ partition: 3, epoch: '7', after: null, recheck: null, limit: 10 }]);
    journal.write({ e: 'send', id: 'a', tok: tokens.get('a') });
    journal.write({ e: 'send', id: 'c', tok: tokens.get('c') });
    await reader.complete('r1', [{ partition: 3, epoch: '7', published: ['a', 'c'], failed: [], held: [] }], { partitionCount: 64 });
    journal.close();
    const events = readJournal<JournalEvent>(join(dir, 'relay.jsonl'));
    expect(events.filter((e) => e.e === 'mark' || e.e === 'skip').map(({ e, ids, n }) => ({ e, ids, n }))).toEqual([
      { e: 'mark', ids: ['c'], n: 1 },
      { e: 'skip', ids: ['a'], n: undefined },
    ]);
    const sends = indexSends([{ name: 'relay-0-0', exit: { code: 0, signal: null, t: 99_000 }, events }]);
    expect(sends.get('a')?.[0]).toMatchObject({ marked: false, until: 99_000 });
    expect(sends.get('c')?.[0]?.marked).toBe(true);
    // the completion's options reach the store: the relay under test runs the statements it runs undecorated
    expect(given).toEqual([{ partitionCount: 64 }]);
  });
});
