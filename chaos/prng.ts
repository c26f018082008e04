/**
 * The one source of randomness in the chaos harness: a seeded PRNG (mulberry32), so that a run is
 * replayed exactly from its seed. Derived streams (`fork`) keep roles independent of each other.
 */
export class Prng {
  #state: number;

  constructor(seed: number | string) {
    this.#state = typeof seed === 'number' ? seed >>> 0 : hashString(seed);
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** An independent stream named after `label`, the same for the same seed. */
  fork(label: string): Prng {
    return new Prng(hashString(`${this.#state}:${label}`));
  }
}

/** FNV-1a, 32 bits: stable names to seeds. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
