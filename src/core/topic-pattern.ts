/** A topic pattern (webhook routes, fan-out routes), compiled: AMQP-style, `*` is one part, `#` zero or more. */
export interface TopicPattern {
  readonly pattern: string;
  matches(topic: string): boolean;
}

const PART = /^[A-Za-z0-9_:/-]+$/;

/** What is wrong with a route's topic pattern, or undefined. */
export function topicPatternFault(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string' || pattern === '') return 'must be a topic or a pattern such as "orders.*" or "orders.#"';
  if (Buffer.byteLength(pattern) > 255) return 'must be at most 255 bytes';
  const bad = pattern.split('.').find((part) => part !== '*' && part !== '#' && !PART.test(part));
  if (bad !== undefined) {
    return `${JSON.stringify(pattern.slice(0, 80))} is not a topic pattern: dot-separated parts of ASCII letters, digits and _ : / -, or "*" (one part) or "#" (zero or more parts)`;
  }
  return undefined;
}

function matchParts(pattern: readonly string[], topic: readonly string[], p: number, t: number): boolean {
  if (p === pattern.length) return t === topic.length;
  const part = pattern[p];
  if (part === '#') {
    for (let skip = t; skip <= topic.length; skip++) if (matchParts(pattern, topic, p + 1, skip)) return true;
    return false;
  }
  if (t === topic.length) return false;
  return (part === '*' || part === topic[t]) && matchParts(pattern, topic, p + 1, t + 1);
}

/** Compiles a pattern that `topicPatternFault` accepted. */
export function compileTopicPattern(pattern: string): TopicPattern {
  const parts = pattern.split('.');
  const exact = !parts.includes('*') && !parts.includes('#');
  return Object.freeze({
    pattern,
    matches: (topic: string) => (exact ? topic === pattern : matchParts(parts, topic.split('.'), 0, 0)),
  });
}
