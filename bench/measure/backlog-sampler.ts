/** Samples a backlog (rows not yet published) at a fixed period while a load runs; summarizes its trend. */
export class BacklogSampler {
  readonly #samples: { at: number; rows: number }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> = Promise.resolve();
  readonly #started = performance.now();

  constructor(read: () => Promise<number>, periodMs: number) {
    const sample = (): void => {
      this.#reading = read().then(
        (rows) => void this.#samples.push({ at: (performance.now() - this.#started) / 1000, rows }),
        () => undefined,
      );
    };
    this.#timer = setInterval(sample, periodMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#reading;
  }

  /** Max, last, and the least-squares slope (rows/s) over the second half: a flat backlog has a slope near 0. */
  summary(): { max: number; last: number; slopePerSecond: number; samples: number } {
    const samples = this.#samples;
    const half = samples.slice(Math.floor(samples.length / 2));
    let slope = 0;
    if (half.length >= 2) {
      const meanAt = half.reduce((s, p) => s + p.at, 0) / half.length;
      const meanRows = half.reduce((s, p) => s + p.rows, 0) / half.length;
      const num = half.reduce((s, p) => s + (p.at - meanAt) * (p.rows - meanRows), 0);
      const den = half.reduce((s, p) => s + (p.at - meanAt) ** 2, 0);
      slope = den === 0 ? 0 : num / den;
    }
    return {
      max: samples.reduce((m, p) => Math.max(m, p.rows), 0),
      last: samples[samples.length - 1]?.rows ?? 0,
      slopePerSecond: slope,
      samples: samples.length,
    };
  }
}
