import type { OutboxSchema, Publisher } from './ports.js';
import type { RelayOptions } from './relay-options.js';
import { runStartChecks, type StartCheck } from './start-checks.js';

/**
 * The relay's start checks, side by side: the store's schema is migrated (`store.verify`), and each publisher
 * (its own and every destination's) reaches its broker and declares its topology (`publisher.verify`).
 */
export async function verifyRelay(store: Partial<Pick<OutboxSchema, 'verify'>>, publisher: Publisher, options: RelayOptions): Promise<void> {
  const checks: StartCheck[] = [];
  const database = store.verify?.bind(store);
  const broker = publisher.verify?.bind(publisher);
  if (database !== undefined) checks.push({ what: 'database', check: database });
  if (broker !== undefined) checks.push({ what: 'broker', check: broker });
  for (const [name, destination] of Object.entries(options.destinations)) {
    const check = destination.publisher.verify?.bind(destination.publisher);
    if (check !== undefined) checks.push({ what: `broker of destination ${name}`, check });
  }
  await runStartChecks(checks, options.logger);
}
