import { expect } from 'vitest';
import { PublishError } from '../../src/core/errors.js';

/** The error a promise rejects with, or undefined if it resolves. */
export const settle = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** The PublishError a publish fails with; fails the test if it resolves or rejects with anything else. */
export async function failureOf(promise: Promise<unknown>): Promise<PublishError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PublishError);
  return error as PublishError;
}

/** What `action` throws, or undefined if it returns. */
export function captureThrow(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}
