import { describe, expect, expectTypeOf, it } from 'vitest';
import { OutboxerError, type OutboxerErrorCode } from '../../src/core/errors.js';
import { CliFailure, type CliFailureCode, describeFailure, isUsageError, TargetedFailure, UsageError } from '../../src/ops/cli/errors.js';
import { OpsHttpError, type OpsHttpErrorCode } from '../../src/ops/http/ops-http-error.js';

describe('the CLI and HTTP errors are OutboxerErrors with a stable code', () => {
  it('UsageError: OUTBOXER_USAGE, its topic and what follows it', () => {
    const error = new UsageError("'pending show' needs the id of a pending message", 'pending', 'full');
    expect(error).toBeInstanceOf(OutboxerError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('OUTBOXER_USAGE');
    expect(error.name).toBe('UsageError');
    expect(error.message).toBe("'pending show' needs the id of a pending message");
    expect([error.topic, error.shown]).toEqual(['pending', 'full']);
    expect([new UsageError('x').topic, new UsageError('x').shown]).toEqual(['main', 'line']);
    expect(isUsageError(error)).toBe(true);
    expectTypeOf(error.code).toEqualTypeOf<'OUTBOXER_USAGE'>();
  });

  it.each<CliFailureCode>(['OUTBOXER_INVALID_OPTION', 'OUTBOXER_MISSING_DEPENDENCY', 'OUTBOXER_NOT_FOUND', 'OUTBOXER_NOT_SUPPORTED'])(
    'CliFailure keeps its code %s',
    (code) => {
      const error = new CliFailure(code, 'no database URL');
      expect(error).toBeInstanceOf(OutboxerError);
      expect(error.code).toBe(code);
      expect(error.name).toBe('CliFailure');
      expect(error.message).toBe('no database URL');
      expect(isUsageError(error)).toBe(false);
    },
  );

  it('TargetedFailure: OUTBOXER_TARGETED_FAILURE, wrapping its cause and naming its server', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5672'), { code: 'ECONNREFUSED' });
    const error = new TargetedFailure(cause, { what: 'broker', urls: ['amqp://guest:secret@127.0.0.1:5672'] });
    expect(error).toBeInstanceOf(OutboxerError);
    expect(error.code).toBe('OUTBOXER_TARGETED_FAILURE');
    expect(error.name).toBe('TargetedFailure');
    expect(error.message).toBe('targeted failure');
    expect(error.cause).toBe(cause);
    expect(error.target.what).toBe('broker');
  });

  it('OpsHttpError keeps its status, OpsHttpErrorCode, message and headers', () => {
    const error = new OpsHttpError(503, 'OUTBOXER_BUSY', 'retry after 1 s', { 'Retry-After': '1' });
    expect(error).toBeInstanceOf(OutboxerError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('OUTBOXER_BUSY');
    expect(error.name).toBe('OpsHttpError');
    expect(error.message).toBe('retry after 1 s');
    expect(error.status).toBe(503);
    expect(error.headers).toEqual({ 'Retry-After': '1' });
    expect(Object.isFrozen(error.headers)).toBe(true);
    expectTypeOf(error.code).toEqualTypeOf<OpsHttpErrorCode>();
  });

  it('code types: each class its own union, the library default unchanged', () => {
    expectTypeOf<CliFailure['code']>().toEqualTypeOf<CliFailureCode>();
    expectTypeOf<TargetedFailure['code']>().toEqualTypeOf<'OUTBOXER_TARGETED_FAILURE'>();
    expectTypeOf<OutboxerError['code']>().toEqualTypeOf<OutboxerErrorCode>();
    expectTypeOf(new OutboxerError('OUTBOXER_CLOSED', 'x').code).toEqualTypeOf<OutboxerErrorCode>();
  });
});

describe('describeFailure writes the same line as before they joined the family', () => {
  it('a CliFailure: its code and message', () => {
    expect(describeFailure('dead', new CliFailure('OUTBOXER_INVALID_OPTION', 'no database URL'))).toBe(
      'outboxer dead: OUTBOXER_INVALID_OPTION: no database URL',
    );
  });

  it("a TargetedFailure: its cause's code and message, and its server with the password hidden", () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5672'), { code: 'ECONNREFUSED' });
    const failure = new TargetedFailure(cause, { what: 'broker', urls: ['amqp://guest:secret@127.0.0.1:5672'] });
    const line = describeFailure('relay', failure);
    expect(line).toBe(
      'outboxer relay: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5672 (broker amqp://***:***@127.0.0.1:5672); is the server running and the port right?',
    );
  });
});
