/** Summary of a set of latencies, in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * Records latencies (ms) exactly (every sample kept, sorted once at the end): a run records at most a few
 * hundred thousand samples, so exact percentiles cost less than getting bucket boundaries right.
 */
export class LatencyHistogram {
  #samples = new Float64Array(1024);
  #count = 0;

  record(ms: number): void {
    if (!Number.isFinite(ms)) throw new Error(`latency sample is not finite: ${ms}`);
    if (this.#count === this.#samples.length) {
      const grown = new Float64Array(this.#samples.length * 2);
      grown.set(this.#samples);
      this.#samples = grown;
    }
    this.#samples[this.#count++] = Math.max(0, ms);
  }

  get count(): number {
    return this.#count;
  }

  summary(): LatencySummary {
    const sorted = this.#samples.slice(0, this.#count).sort();
    const at = (q: number): number => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number));
    let sum = 0;
    for (const value of sorted) sum += value;
    return {
      count: sorted.length,
      p50: at(0.5),
      p99: at(0.99),
      max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
      mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    };
  }
}
