import type { RelayHealth } from './relay-health.js';

/** Whether a relay can do its work now, and if not, why: what `/health/ready` answers and `outboxer_relay_ready` shows. */
export interface RelayReadiness {
  readonly ready: boolean;
  /**
   * Empty when ready; otherwise one fixed sentence per failed condition, in a fixed order. They never carry the
   * driver's error (an address, a database or user name): `/health/ready` is open, while the error stays in
   * `RelayHealth.database.error` for those with read access.
   */
  readonly reasons: string[];
}

/**
 * The readiness rule: a relay is ready when it runs, has joined its table's group (it has a relay id: its
 * partitions are owned or being acquired), reaches its database, and its broker is not disconnected
 * (`connecting` and `unknown` pass: a reconnect in progress, or a publisher that does not say). Holding no
 * partition is fine: with more relays than partitions some hold none.
 */
export function relayReadiness(health: RelayHealth): RelayReadiness {
  const reasons: string[] = [];
  if (!health.running) reasons.push('the relay is not running');
  else if (health.relayId === undefined) reasons.push("the relay has not joined its table's group yet");
  if (!health.database.reachable) reasons.push('the database is unreachable');
  if (health.broker === 'disconnected') reasons.push('the broker is disconnected');
  return { ready: reasons.length === 0, reasons };
}
