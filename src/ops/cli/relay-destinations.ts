import { readFileSync } from 'node:fs';
import { type EnvelopeInput, envelopeShaper } from '../../core/destinations.js';
import { ConfigurationError } from '../../core/errors.js';
import { DEFAULT_DESTINATION, destinationFault } from '../../core/message-rules.js';
import { UsageError } from './errors.js';
import { OptionReader } from './option-reader.js';
import { type PublisherChoice, resolvePublisherChoice } from './publisher-choice.js';
import { CLI_PUBLISHERS } from './publishers/registry.js';

/** One named destination of `--config`: a publisher of the registry with its URL and flags, and its envelope. */
export interface DestinationSettings extends PublisherChoice {
  readonly name: string;
  readonly envelope: EnvelopeInput;
}

/** The fields a destination takes besides its publisher's own flags. */
const COMMON_FIELDS = ['publisher', 'broker-url', 'envelope'];

/**
 * Reads the destinations of `--config <file>`: `{ "destinations": { "<name>": { "publisher": "webhook",
 * "broker-url": "https://…", "<flag of that publisher>": …, "envelope": { "headers": [...], "key": false } } } }`.
 * Each destination is checked as the relay's own flags are (publisher, URL scheme, flags of that publisher only,
 * their kinds and bounds); a refusal is a usage error naming the file and the destination, never a value.
 */
export function readDestinations(file: string, read: (file: string) => string = (path) => readFileSync(path, 'utf8')): readonly DestinationSettings[] {
  const where = `--config ${file}`;
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    throw new UsageError(`${where}: cannot read it (${(error as { code?: string }).code ?? (error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed) || !isObject(parsed.destinations))
    throw new UsageError(`${where}: expected an object { "destinations": { "<name>": { "publisher": …, … } } }`);
  const extra = Object.keys(parsed).find((field) => field !== 'destinations');
  if (extra !== undefined) throw new UsageError(`${where}: unknown field ${JSON.stringify(extra.slice(0, 40))} (known: destinations)`);
  return Object.freeze(
    Object.entries(parsed.destinations).map(([name, entry]) => destination(`${where}: destination ${JSON.stringify(name.slice(0, 64))}`, name, entry)),
  );
}

function destination(where: string, name: string, entry: unknown): DestinationSettings {
  const fault = name === DEFAULT_DESTINATION ? "default is the relay's own publisher (--publisher): name the others" : destinationFault(name);
  if (fault !== undefined) throw new UsageError(`${where}: ${fault}`);
  if (!isObject(entry)) throw new UsageError(`${where}: expected an object with "publisher" and its settings`);
  if (typeof entry.publisher !== 'string') throw new UsageError(`${where}: "publisher" is required (e.g. "webhook")`);
  const values: Record<string, string> = {};
  for (const [field, value] of Object.entries(entry)) {
    if (field === 'envelope') continue;
    if (!COMMON_FIELDS.includes(field) && !CLI_PUBLISHERS.some((publisher) => publisher.flags.includes(field)))
      throw new UsageError(
        `${where}: unknown field ${JSON.stringify(field.slice(0, 40))} (the fields are publisher, broker-url, envelope and the flags of its publisher)`,
      );
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new UsageError(`${where}: "${field}" must be a string, number or boolean`);
    values[field] = String(value);
  }
  let choice: PublisherChoice;
  try {
    // only the file counts: the relay's own variables (OUTBOXER_BROKER_URL, ...) belong to its own publisher
    choice = resolvePublisherChoice(new OptionReader(values, {}, 'relay'));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // the reader names flags and variables; in the file they are fields
    const message = error.message
      .replace(/ \(set by [^)]*\)/g, '')
      .replace(/ or OUTBOXER_[A-Z_]+/g, '')
      .replace(/--([a-z0-9-]+)/g, '"$1"');
    throw new UsageError(`${where}: ${message}`);
  }
  const envelope = (entry.envelope ?? {}) as EnvelopeInput;
  try {
    envelopeShaper(name, isObject(envelope) ? envelope : ({ headers: envelope } as EnvelopeInput));
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw new UsageError(`${where}: ${error.message.replace(/^relay option destinations\.[^:]+: /, '')}`);
  }
  return Object.freeze({ ...choice, name, envelope: Object.freeze({ ...envelope }) });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
