import { ConfigurationError } from '../../core/errors.js';
import { checkPendingQuery } from '../../core/pending-message-input.js';
import type { CommandName } from './command-names.js';
import type { OptionReader } from './option-reader.js';

/** What `outboxer pending list|show|delete` was asked, checked as the store checks it. */
export interface PendingSettings {
  /** `pending list`: the filters given (none when absent). */
  readonly topic?: string;
  readonly key?: string;
  readonly olderThanSeconds?: number;
  /** `pending show --payload`: print the headers' values and the body. */
  readonly payload: boolean;
}

/**
 * Reads the flags of a `pending` command and checks its operands' count (`show` one id, `delete` at least one;
 * the ids themselves are checked with those of `dead`). A refusal is a usage error (exit 2) carrying the code
 * the store would give, before anything connects.
 */
export function resolvePendingSettings(reader: OptionReader, command: CommandName, limit: number, operands: readonly string[]): PendingSettings {
  if (command === 'pending show' && operands.length !== 1) {
    throw reader.error(
      operands.length === 0 ? "'pending show' needs the id of a pending message" : "'pending show' takes one message id; 'pending list' lists several",
    );
  }
  if (command === 'pending delete' && operands.length === 0) throw reader.error("'pending delete' needs the ids of the pending messages to delete");
  const topic = reader.source('topic')?.value;
  const key = reader.source('key')?.value;
  const olderThanSeconds = reader.integer('older-than-s');
  try {
    checkPendingQuery({ limit, topic, key, olderThanSeconds });
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw reader.error(`${error.code}: ${error.message}`);
  }
  return Object.freeze({
    ...(topic === undefined ? {} : { topic }),
    ...(key === undefined ? {} : { key }),
    ...(olderThanSeconds === undefined ? {} : { olderThanSeconds }),
    payload: reader.typed('payload') === true,
  });
}
