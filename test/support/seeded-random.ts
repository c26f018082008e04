import { Prng } from '../../chaos/prng.js';

/** A seeded generator of floats in [0, 1) (the chaos harness's mulberry32), so a failing case replays from its seed. */
export function seeded(seed: number): () => number {
  const prng = new Prng(seed);
  return () => prng.next();
}
