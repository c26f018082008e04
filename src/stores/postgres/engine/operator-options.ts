import { z } from 'zod';
import { ConfigurationError } from '../../../core/errors.js';

export const positiveInt = z.number().int().positive();

/** How long an operator's command waits for a lock, per try, and how many tries (see `lockedTransaction`). */
export const lockOptions = {
  lockTimeoutMs: positiveInt.max(60_000).default(2000),
  lockAttempts: positiveInt.max(1000).default(30),
};

/** Validates an operator command's options once, with its defaults, and freezes them. */
export function resolveOperatorOptions<S extends z.ZodType>(schema: S, input: unknown, command: string): Readonly<z.output<S>> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${command} option ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return Object.freeze(parsed.data);
}
