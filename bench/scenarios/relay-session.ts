import type pg from 'pg';
import type { ContenderFactory, ContenderOptions, RelayContender } from '../contenders/contender.js';
import { ConfirmClock } from '../measure/confirm-clock.js';
import { KeyOrderWatch } from '../measure/key-order.js';
import { type BrokerKind, type BrokerTarget, createBrokerTarget } from '../support/broker-target.js';

/** One contender set up over its own schema, with its own broker resources and a confirm clock. */
export interface RelaySession {
  readonly contender: RelayContender;
  readonly target: BrokerTarget | undefined;
  readonly clock: ConfirmClock;
  /** Per-key order of the relay's publish calls (meaningful on a pre-loaded backlog). */
  readonly order: KeyOrderWatch;
  /** Starts the relay publishing to the session's broker target through the clock. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Sets up a contender (and a broker target unless `broker` is undefined) and always cleans both up. */
export async function withRelaySession<T>(
  admin: pg.Client,
  factory: ContenderFactory,
  options: ContenderOptions,
  broker: BrokerKind | undefined,
  work: (session: RelaySession) => Promise<T>,
): Promise<T> {
  const target = broker === undefined ? undefined : await createBrokerTarget(broker);
  const contender = factory(options);
  const clock = new ConfirmClock();
  const order = new KeyOrderWatch();
  const session: RelaySession = {
    contender,
    target,
    clock,
    order,
    async start() {
      if (target === undefined) throw new Error('this session has no broker target');
      await contender.start(order.wrap(clock.wrap(target.publisher())));
    },
    async close() {
      await contender.stop();
    },
  };
  try {
    await contender.setup(admin);
    return await work(session);
  } finally {
    await contender.stop().catch(() => undefined);
    await contender.teardown(admin).catch(() => undefined);
    await target?.cleanup().catch(() => undefined);
  }
}

/** Polls `read` until it returns `expected` or `timeoutMs` passes; returns the last value read. */
export async function settle(read: () => Promise<number>, expected: number, timeoutMs = 5000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let value = await read();
  while (value !== expected && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}
