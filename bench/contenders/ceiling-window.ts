export interface CeilingRun {
  readonly confirmed: number;
  readonly seconds: number;
}

/** Publishes messages 0..count-1 keeping at most `window` unconfirmed, as the relay's maxInFlight does. */
export async function windowed(count: number, window: number, publish: (n: number) => Promise<void>): Promise<CeilingRun> {
  let next = 0;
  let confirmed = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < count) {
      const n = next++;
      await publish(n);
      confirmed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, lane));
  return { confirmed, seconds: (performance.now() - started) / 1000 };
}
