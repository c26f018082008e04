import { OpsHttpError } from './ops-http-error.js';

/** A whole-number query parameter a route takes, with its bounds and the value used when it is absent. */
export interface IntegerParameter {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** A text query parameter a route takes: optional (absent: no value), not empty, at most `maxBytes` bytes of UTF-8. */
export interface TextParameter {
  readonly text: true;
  readonly maxBytes: number;
}

export type QueryParameters = Readonly<Record<string, IntegerParameter | TextParameter>>;

/** Where a checked query keeps its text values, apart from the numbers, so that `query.limit` stays a number for every route. */
const TEXT_VALUES: unique symbol = Symbol('outboxer text query values');

/** A checked query: the whole numbers by name, and the text values a route reads with `queryText`. */
export type QueryValues = Readonly<Record<string, number>> & { readonly [TEXT_VALUES]?: Readonly<Record<string, string>> };

/** The value of a text parameter of the route, or undefined when the request did not give it. */
export function queryText(query: QueryValues, name: string): string | undefined {
  const texts = query[TEXT_VALUES];
  return texts !== undefined && Object.hasOwn(texts, name) ? texts[name] : undefined;
}

/**
 * The query of a request, checked against what its route takes: every parameter known, given once, a whole
 * number within its bounds or a text within its length (read back with `queryText`). Anything else is refused
 * (400), never ignored, so that a typo does not silently fall back to a default.
 */
export function readQuery(query: string, accepted: QueryParameters = {}): QueryValues {
  const values: Record<string, number> = {};
  const texts: Record<string, string> = {};
  const given = new URLSearchParams(query);
  const seen = new Set<string>();
  const known = Object.keys(accepted);
  for (const [name, text] of given) {
    const parameter = Object.hasOwn(accepted, name) ? accepted[name] : undefined;
    if (parameter === undefined) {
      throw invalid(
        `unknown query parameter ${JSON.stringify(name.slice(0, 40))}; ${known.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${known.join(', ')}`}`,
      );
    }
    if (seen.has(name)) throw invalid(`query parameter ${name} is given more than once`);
    seen.add(name);
    if ('text' in parameter) {
      if (text === '' || Buffer.byteLength(text) > parameter.maxBytes)
        throw invalid(`query parameter ${name} must be 1 to ${parameter.maxBytes} bytes of text`);
      texts[name] = text;
      continue;
    }
    const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
    if (!(value >= parameter.min && value <= parameter.max)) {
      throw invalid(`query parameter ${name} must be a whole number from ${parameter.min} to ${parameter.max}`);
    }
    values[name] = value;
  }
  for (const [name, parameter] of Object.entries(accepted)) if (!('text' in parameter)) values[name] ??= parameter.default;
  if (Object.keys(texts).length === 0) return Object.freeze(values);
  return Object.freeze(Object.defineProperty(values, TEXT_VALUES, { value: Object.freeze(texts), enumerable: false }));
}

function invalid(message: string): OpsHttpError {
  return new OpsHttpError(400, 'OUTBOXER_INVALID_QUERY', message);
}
