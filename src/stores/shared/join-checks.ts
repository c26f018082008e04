import { ConfigurationError } from '../../core/errors.js';
import type { RelayReport } from '../../core/ports.js';
import { boundedTrouble } from '../../core/relay-trouble.js';

/** The longest lease a relay may ask for at `join`: a day. */
export const MAX_LEASE_MS = 24 * 60 * 60 * 1000;

/** What every store checks of a relay's `join` before it writes: a name for operators, and a lease it can keep. */
export function checkJoin(relay: { readonly name: string; readonly leaseMs: number }): void {
  if (typeof relay.name !== 'string' || relay.name === '' || Buffer.byteLength(relay.name) > 200) {
    const got = typeof relay.name === 'string' ? `${Buffer.byteLength(relay.name)} bytes` : typeof relay.name;
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `join: relay name must be 1 to 200 bytes (host and pid, for operators); got ${got}`);
  }
  if (!Number.isSafeInteger(relay.leaseMs) || relay.leaseMs < 1 || relay.leaseMs > MAX_LEASE_MS) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `join: leaseMs must be a whole number of ms from 1 to ${MAX_LEASE_MS}; got ${String(relay.leaseMs)}`,
    );
  }
}

/** The trouble a relay reports with its join or beat, as every store writes it: `null`, or a reason cut to `MAX_TROUBLE_BYTES`. */
export function troubleOf(report: RelayReport): string | null {
  const trouble = report.trouble ?? null;
  if (trouble !== null && (typeof trouble !== 'string' || trouble === '')) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `relay trouble must be a non-empty reason or null; got ${typeof trouble === 'string' ? 'an empty string' : typeof trouble}`,
    );
  }
  return trouble === null ? null : boundedTrouble(trouble);
}
