import { describe, expect, it } from 'vitest';
import { OutboxerError, type OutboxerErrorCode, PublishError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/ports.js';
import { isMisconfiguration, runStartChecks } from '../../src/core/start-checks.js';

function recording(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const none = () => undefined;
  return { warnings, debug: none, info: none, error: none, warn: (fields, message) => warnings.push(`${message} ${JSON.stringify(fields)}`) };
}
const fails = (code: OutboxerErrorCode) => () => Promise.reject(new PublishError(code, `${code} happened`));
const passes = () => Promise.resolve();

describe('isMisconfiguration', () => {
  it.each<[OutboxerErrorCode, boolean]>([
    ['OUTBOXER_NOT_MIGRATED', true],
    ['OUTBOXER_DATABASE_NOT_FOUND', true],
    ['OUTBOXER_AUTH_FAILED', true],
    ['OUTBOXER_VHOST_REFUSED', true],
    ['OUTBOXER_WRONG_PROTOCOL', true],
    ['OUTBOXER_EXCHANGE_REFUSED', true],
    ['OUTBOXER_BROKER_UNAVAILABLE', false],
    ['OUTBOXER_DATABASE_UNAVAILABLE', false],
    ['OUTBOXER_PUBLISH_TIMEOUT', false],
  ])('%s -> %s', (code, expected) => {
    expect(isMisconfiguration(new OutboxerError(code, 'x'))).toBe(expected);
  });

  it('is false for anything that is not an OutboxerError', () => {
    expect(isMisconfiguration(Object.assign(new Error('x'), { code: 'OUTBOXER_NOT_MIGRATED' }))).toBe(false);
    expect(isMisconfiguration(undefined)).toBe(false);
  });
});

describe('runStartChecks', () => {
  it('passes when every check passes, without a warning', async () => {
    const logger = recording();
    await runStartChecks(
      [
        { what: 'database', check: passes },
        { what: 'broker', check: passes },
      ],
      logger,
    );
    expect(logger.warnings).toEqual([]);
  });

  it('rejects with the first misconfiguration in the order of the checks, even when another check is only down', async () => {
    const logger = recording();
    const run = runStartChecks(
      [
        { what: 'database', check: fails('OUTBOXER_NOT_MIGRATED') },
        { what: 'broker', check: fails('OUTBOXER_AUTH_FAILED') },
      ],
      logger,
    );
    await expect(run).rejects.toMatchObject({ code: 'OUTBOXER_NOT_MIGRATED' });
    await expect(
      runStartChecks(
        [
          { what: 'database', check: fails('OUTBOXER_DATABASE_UNAVAILABLE') },
          { what: 'broker', check: fails('OUTBOXER_VHOST_REFUSED') },
        ],
        logger,
      ),
    ).rejects.toMatchObject({ code: 'OUTBOXER_VHOST_REFUSED' });
  });

  it('lets an outage through with one warning per server: the relay rides it out once started', async () => {
    const logger = recording();
    await runStartChecks(
      [
        { what: 'database', check: passes },
        { what: 'broker', check: fails('OUTBOXER_BROKER_UNAVAILABLE') },
      ],
      logger,
    );
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain('start check: the broker is out of reach now');
    expect(logger.warnings[0]).toContain('OUTBOXER_BROKER_UNAVAILABLE');
  });
});
