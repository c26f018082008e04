import { describe, expect, it } from 'vitest';
import type { PendingMessage } from '../../src/core/ports/pending-messages.js';
import { parseCommandLine, type OptionValues } from '../../src/ops/cli/args.js';
import type { CommandName } from '../../src/ops/cli/command-names.js';
import { pausesJson, pausesText, readPauses } from '../../src/ops/cli/commands/paused-topic-list.js';
import { resolveConfig } from '../../src/ops/cli/config.js';
import { UsageError } from '../../src/ops/cli/errors.js';
import { helpText } from '../../src/ops/cli/help.js';
import { optionDefinition } from '../../src/ops/cli/option-definitions.js';
import { destinationFilter, destinationFilterFault, shownDestination } from '../../src/ops/destination-filter.js';
import { destinationQuery } from '../../src/ops/http/destination-query.js';
import { OpsHttpError } from '../../src/ops/http/ops-http-error.js';
import { readQuery } from '../../src/ops/http/query-parameters.js';
import { pendingMessageJson } from '../../src/ops/pending-message-json.js';

const ENV = { OUTBOXER_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };
const ID = '0193c2f4-7c1e-7a51-9f0e-3c2d1b0a9e88';

function config(command: CommandName, values: OptionValues, operands: string[] = []) {
  return resolveConfig(command, values, operands, ENV);
}

function usageError(action: () => unknown): UsageError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('accepted');
}

describe('destinations as operators name them', () => {
  it('`default` is the rows without a destination (null in the ports); any other valid name is itself', () => {
    expect(destinationFilter('default')).toBeNull();
    expect(destinationFilter('partner')).toBe('partner');
    expect(destinationFilter('Default')).toBe('Default');
    expect(shownDestination(null)).toBe('default');
    expect(shownDestination(undefined)).toBe('default');
    expect(shownDestination('partner')).toBe('partner');
    expect(destinationFilterFault('partner-2_b')).toBeUndefined();
    expect(destinationFilterFault('default')).toBeUndefined();
    expect(destinationFilterFault('two words')).toMatch(
      /^destination "two words" is invalid: a destination is an ASCII letter or digit, .*; `default` names the messages stored without one$/,
    );
  });
});

describe('CLI --destination', () => {
  it('is read by dead list, retry, purge and pending list, as given (checked), flag only', () => {
    expect(config('dead list', { destination: 'partner' }).destination).toBe('partner');
    expect(config('dead retry', { destination: 'default', all: true }).destination).toBe('default');
    expect(config('dead purge', { destination: 'partner' }, [ID]).destination).toBe('partner');
    expect(config('pending list', { destination: 'partner', topic: 'orders.created' })).toMatchObject({
      destination: 'partner',
      pending: { topic: 'orders.created' },
    });
    expect(config('dead list', {}).destination).toBeUndefined();
    expect(optionDefinition('destination').env).toBeUndefined();
    expect(optionDefinition('destination').commands).toEqual(['dead list', 'dead retry', 'dead purge', 'pending list']);
  });

  it.each([
    ['dead list', 'two words'],
    ['dead retry', '-partner'],
    ['dead purge', 'p'.repeat(65)],
    ['pending list', ''],
    ['pending list', 'pärtner'],
  ] as const)('%s refuses --destination %j before anything connects, naming the flag (exit 2)', (command, destination) => {
    const operands = command === 'dead retry' || command === 'dead purge' ? [ID] : [];
    const error = usageError(() => config(command, { destination }, operands));
    expect(error.message).toMatch(/^OUTBOXER_INVALID_DESTINATION: --destination: destination ".*" is invalid: /);
    expect(error.code).toBe('OUTBOXER_USAGE');
  });

  it('does not apply to the other commands', () => {
    for (const argv of [['pending', 'show', ID], ['pending', 'delete', ID], ['status'], ['topics', 'list']]) {
      expect(() => parseCommandLine([...argv, '--destination', 'partner'])).toThrow(/--destination does not apply to/);
    }
    expect(parseCommandLine(['dead', 'purge', '--all', '--destination', 'partner'])).toMatchObject({
      kind: 'run',
      command: 'dead purge',
      values: { all: true, destination: 'partner' },
    });
  });

  it('is in the help of the commands that take it', () => {
    for (const topic of ['dead list', 'dead retry', 'dead purge'] as const)
      expect(helpText(topic)).toMatch(/--destination <name>\s+only this destination's messages \('default': those stored without one\)/);
    expect(helpText('pending list')).toMatch(/--destination <name>\s+only this destination's messages; the name default means those stored without one/);
    expect(helpText('main')).toContain('filters: topic, key, age, destination');
  });
});

describe('admin API ?destination=', () => {
  const filter = (query: string) => destinationQuery(readQuery(query, { destination: { text: true, maxBytes: 64 } }));

  it("is the ports' filter: none when absent, null for default", () => {
    expect(filter('')).toEqual({});
    expect(filter('destination=partner')).toEqual({ destination: 'partner' });
    expect(filter('destination=default')).toEqual({ destination: null });
  });

  it.each(['two%20words', '-x', '%C3%A4', 'a.b'])("refuses destination=%s with 400 OUTBOXER_INVALID_QUERY, led by the store's code", (value) => {
    let refused: unknown;
    try {
      filter(`destination=${value}`);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(OpsHttpError);
    expect(refused).toMatchObject({ status: 400, code: 'OUTBOXER_INVALID_QUERY' });
    expect((refused as Error).message).toMatch(/^OUTBOXER_INVALID_DESTINATION: query parameter destination: destination ".*" is invalid/);
  });
});

describe('rows and topic lag with their destination', () => {
  it('a pending message as JSON carries its destination, null for the default one', () => {
    const message: PendingMessage = {
      id: ID,
      seq: '7',
      topic: 'orders.created',
      type: 'order.created',
      key: null,
      attempts: 0,
      lastError: null,
      createdAt: new Date('2026-11-25T16:00:00.000Z'),
      dueAt: null,
      ageSeconds: 1,
      destination: 'partner',
    };
    expect(pendingMessageJson(message)).toMatchObject({ id: ID, destination: 'partner' });
    expect(pendingMessageJson({ ...message, destination: null })).toMatchObject({ destination: null });
  });

  it('status and topics list show the destination each relay pause holds; an operator pause holds every one', async () => {
    const since = new Date('2026-11-25T09:38:05.114Z');
    const hold = (held: number) => ({ reason: 'OUTBOXER_UNROUTABLE: no queue', since, held });
    const listing = await readPauses({
      pausedTopics: () => Promise.resolve([{ topic: 'billing.run', reason: 'maintenance', pausedAt: new Date('2026-11-25T09:00:00.000Z') }]),
      topicLag: () =>
        Promise.resolve([
          { topic: 'audit.log', destination: 'partner', pending: 3, oldestPendingAgeSeconds: 5, relayPause: hold(3) },
          { topic: 'audit.log', destination: null, pending: 2, oldestPendingAgeSeconds: 5, relayPause: hold(2) },
          { topic: 'orders.created', destination: 'partner', pending: 9, oldestPendingAgeSeconds: 1, relayPause: null },
        ]),
    });
    expect(pausesJson(listing.pauses)).toEqual([
      { topic: 'billing.run', pausedBy: 'operator', reason: 'maintenance', pausedAt: '2026-11-25T09:00:00.000Z' },
      { topic: 'audit.log', destination: null, pausedBy: 'relay', reason: 'OUTBOXER_UNROUTABLE: no queue', pausedAt: since.toISOString(), held: 2 },
      { topic: 'audit.log', destination: 'partner', pausedBy: 'relay', reason: 'OUTBOXER_UNROUTABLE: no queue', pausedAt: since.toISOString(), held: 3 },
    ]);
    const [header, operator, ownPublisher, partner] = pausesText(listing, 'public.outbox').split('\n');
    expect(header).toMatch(/^topic\s+destination\s+paused by\s+paused at\s+reason$/);
    expect(operator).toMatch(/^billing\.run\s+\(all\)\s+operator\s+2026-11-25T09:00:00\.000Z\s+maintenance$/);
    expect(ownPublisher).toMatch(/^audit\.log\s+default\s+relay\s+\S+\s+destination missing: OUTBOXER_UNROUTABLE: no queue \(2 message\(s\) held\)$/);
    expect(partner).toMatch(/^audit\.log\s+partner\s+relay\s/);
  });
});
