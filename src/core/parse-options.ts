import { z } from 'zod';
import { ConfigurationError } from './errors.js';

export interface ParseOptionsSettings {
  /** Options taken apart before parsing (logger, hooks, ...): listed among the known ones when a name is unknown. */
  readonly alsoKnown?: readonly string[];
  /** Shows an unknown option's name as a JSON string (`"publishTimeout"`), so spaces and odd characters stay visible. */
  readonly quoteUnknown?: boolean;
}

/**
 * Parses `input` with an options schema (defaults and bounds); the first fault becomes a ConfigurationError
 * `OUTBOXER_INVALID_OPTION` reading `<subject> option <path>: <problem>`. An unknown option (a typo) is reported
 * before any other fault, with the known ones listed.
 */
export function parseOptions<S extends z.ZodObject>(schema: S, input: unknown, subject: string, settings: ParseOptionsSettings = {}): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const { issues } = parsed.error;
  const issue = issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const known = [...Object.keys(schema.shape), ...(settings.alsoKnown ?? [])].join(', ');
    const names = issue.keys.map((key) => (settings.quoteUnknown === true ? JSON.stringify(key.slice(0, 60)) : key.slice(0, 60)));
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${subject} option ${names.join(', ')}: is not an option (known: ${known})`, {
      options: issue.keys.map((key) => key.slice(0, 60)),
    });
  }
  const path = issue?.path.map(String).join('.') ?? '';
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${subject} option ${path || '(root)'}: ${issue?.message ?? 'is invalid'}`, {
    options: path === '' ? [] : [path],
  });
}

/** A whole number from `min` to `max`, with a message that says so (zod's own reads "Too small: expected number to be >=1"). */
export function wholeNumber(min: number, max: number, unit = '', note = ''): z.ZodNumber {
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
  const message = `must be a whole number${unit === '' ? '' : ` of ${unit}`} ${range}${note === '' ? '' : ` ${note}`}`;
  return z.number({ error: message }).int({ error: message }).min(min, { error: message }).max(max, { error: message });
}

/** A pino-compatible logger: `debug`, `info`, `warn` and `error` methods (`methods` narrows what is checked). */
export function isLoggerLike(value: unknown, methods: readonly string[] = ['debug', 'info', 'warn', 'error']): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return methods.every((method) => typeof candidate[method] === 'function');
}
