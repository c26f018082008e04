import { OpsHttpError } from './ops-http-error.js';

/** A whole-number query parameter a route takes, with its bounds and the value used when it is absent. */
export interface IntegerParameter {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

export type QueryParameters = Readonly<Record<string, IntegerParameter>>;

/**
 * The query of a request, checked against what its route takes: every parameter known, given once, a whole
 * number within its bounds. Anything else is refused (400), never ignored, so that a typo does not silently
 * fall back to a default.
 */
export function readQuery(query: string, accepted: QueryParameters = {}): Readonly<Record<string, number>> {
  const values: Record<string, number> = {};
  const given = new URLSearchParams(query);
  const seen = new Set<string>();
  const known = Object.keys(accepted);
  for (const [name, text] of given) {
    const parameter = Object.hasOwn(accepted, name) ? accepted[name] : undefined;
    if (parameter === undefined) {
      throw invalid(`unknown query parameter ${JSON.stringify(name.slice(0, 40))}; ${known.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${known.join(', ')}`}`);
    }
    if (seen.has(name)) throw invalid(`query parameter ${name} is given more than once`);
    seen.add(name);
    const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
    if (!(value >= parameter.min && value <= parameter.max)) {
      throw invalid(`query parameter ${name} must be a whole number from ${parameter.min} to ${parameter.max}`);
    }
    values[name] = value;
  }
  for (const [name, parameter] of Object.entries(accepted)) values[name] ??= parameter.default;
  return Object.freeze(values);
}

function invalid(message: string): OpsHttpError {
  return new OpsHttpError(400, 'OUTBOXER_INVALID_QUERY', message);
}
