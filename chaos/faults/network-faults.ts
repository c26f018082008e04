import type { TcpProxy } from '../../test/support/tcp-proxy.js';
import type { FaultContext } from '../scenario.js';

/** Whom a fault hits when narrower than every relay: the incarnation behind a proxy of its own. */
export interface FaultTarget {
  readonly target?: string;
  /** Fan-out: the destinations behind the proxy, when it carries one destination's traffic only. */
  readonly destinations?: readonly string[];
}

/** Every relay connection through `proxy` is reset, and new ones refused, for `ms`: an outage. */
export async function outage(ctx: FaultContext, proxy: TcpProxy, what: string, ms: number, on: FaultTarget = {}): Promise<void> {
  const fault = ctx.log.begin(`${what}-outage`, on);
  proxy.setMode('refuse');
  await ctx.sleep(ms);
  proxy.setMode('forward');
  ctx.log.heal(fault);
}

/** Bytes vanish (no FIN, no RST) for `ms`, then flow again on the same, now corrupted, connections. */
export async function blackhole(ctx: FaultContext, proxy: TcpProxy, what: string, ms: number, on: FaultTarget = {}): Promise<void> {
  const fault = ctx.log.begin(`${what}-blackhole`, on);
  proxy.setMode('blackhole');
  await ctx.sleep(ms);
  proxy.resetAll();
  proxy.setMode('forward');
  ctx.log.heal(fault);
}

/** Every chunk in both directions is delayed by `latencyMs`, for `ms`. */
export async function latency(ctx: FaultContext, proxy: TcpProxy, what: string, latencyMs: number, ms: number): Promise<void> {
  const fault = ctx.log.begin(`${what}-latency-${latencyMs}ms`);
  proxy.setLatency(latencyMs);
  await ctx.sleep(ms);
  proxy.setLatency(0);
  ctx.log.heal(fault);
}

/** Resets every open connection once (the relays reconnect). */
export function resetConnections(ctx: FaultContext, proxy: TcpProxy, what: string): void {
  ctx.log.begin(`${what}-reset`);
  proxy.resetAll();
}
