/**
 * "Did you mean" for a mistyped command or option: the nearest known word, if it is near enough to be a slip
 * of the fingers (a letter missing, extra, wrong, or two swapped) or the start of a known word.
 */

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string alignment distance. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}

/**
 * The candidate `word` most likely meant, or undefined when none is close: at most one edit per three letters
 * (at least one, at most three), or a candidate that starts with `word` (at least three letters) and is the
 * only one that does. Case is ignored; a word under three letters (`-x`) is too short to guess from.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  if (typed.length < 3) return undefined;
  const allowed = Math.min(3, Math.max(1, Math.floor(typed.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= allowed) return best;
  const extensions = candidates.filter((candidate) => candidate.toLowerCase().startsWith(typed));
  return extensions.length === 1 ? extensions[0] : undefined;
}

/** `; did you mean --lease-ms?` or nothing. */
export function didYouMean(word: string, candidates: readonly string[], spell: (candidate: string) => string = (candidate) => candidate): string {
  const match = closestMatch(word, candidates);
  return match === undefined ? '' : `; did you mean ${spell(match)}?`;
}
