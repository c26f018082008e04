import { OutboxerError } from '../errors.js';

/**
 * Waits at most `ms` for a statement. The store may have no statement timeout of its own (the PostgreSQL pool
 * of the CLI ends statements after 30 s, a caller's pool perhaps never), and a stalled lease statement must not
 * freeze the relay's loop past its lease: the loop gives up on the answer and goes on as if it failed. The
 * statement itself may still run and commit; every lease step is safe to see committed later (a late grant is
 * adopted from the next heartbeat's list, a late release or drain only frees what the relay stopped using).
 */
export async function bounded<T>(statement: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutboxerError('OUTBOXER_DATABASE_UNAVAILABLE', `${what} got no answer from the database within ${ms} ms; treated as failed`)),
      ms,
    );
  });
  statement.catch(() => undefined); // an answer that loses the race must not go unhandled
  try {
    return await Promise.race([statement, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `write` up to `attempts` times, `backoffMs` x the attempt apart, reporting each failure but the last. */
export async function persistently<T>(write: () => Promise<T>, attempts: number, backoffMs: number, onFailure: (error: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= attempts) throw error;
      onFailure(error);
      await new Promise((resolve) => setTimeout(resolve, backoffMs * attempt));
    }
  }
}
