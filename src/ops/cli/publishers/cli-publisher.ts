import type { Logger, Publisher } from '../../../core/ports.js';
import { CliFailure } from '../errors.js';

/** A value of one of a publisher's own flags, typed by its option definition. */
export type PublisherFlagValue = string | number | boolean;

/** What `outboxer relay` resolved for the chosen publisher: its broker URLs and the flags of its own that were set. */
export interface PublisherSettings {
  /** Empty for a publisher that takes no broker URL; several only where `brokerUrl.list` says so. */
  readonly brokerUrls: readonly string[];
  /** By flag name (`exchange`, `subject-prefix`); a flag that was not set is absent. */
  readonly flags: Readonly<Record<string, PublisherFlagValue>>;
}

export interface PublisherContext {
  readonly logger: Logger;
  /** The relay's publish timeout, handed to the publisher so that its own timeout neither cuts it short nor outlives it. */
  readonly publishTimeoutMs: number;
}

/**
 * One publisher the CLI can run. The registry (`registry.ts`) lists them; `--publisher`, the checks of the
 * relay's settings, the help and the start log read it, so that adding a broker adds one entry and its flags.
 */
export interface CliPublisher {
  readonly name: string;
  /** One line for `--help` and docs/cli.md: where it publishes. */
  readonly summary: string;
  /** The optional peer packages its module needs, as `npm install` takes them; absent for a built-in. */
  readonly peers?: string;
  /** What `--broker-url` takes; absent: the publisher takes none, and the flag is refused. */
  readonly brokerUrl?: { readonly protocols: readonly string[]; readonly list?: true };
  /** The flags only this publisher reads (defined in publisher-option-definitions.ts). */
  readonly flags: readonly string[];
  /** Its flags whose value is never logged. */
  readonly secretFlags?: readonly string[];
  create(settings: PublisherSettings, context: PublisherContext): Promise<Publisher>;
}

/** Loads a publisher's module when it is chosen (`import()`), so that its broker client stays optional. */
export async function loadPublisherModule<T>(entry: Pick<CliPublisher, 'name' | 'peers'>, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && entry.peers !== undefined) {
      throw new CliFailure('OUTBOXER_MISSING_DEPENDENCY', `--publisher ${entry.name} needs ${entry.peers}: npm install ${entry.peers}`);
    }
    throw error;
  }
}

/** A text flag's value, or undefined when it was not set. */
export function textFlag(settings: PublisherSettings, flag: string): string | undefined {
  const value = settings.flags[flag];
  return value === undefined ? undefined : String(value);
}

/** The one broker URL of a publisher that takes exactly one (the settings checks made sure it is there). */
export function singleUrl(settings: PublisherSettings, name: string): string {
  const url = settings.brokerUrls[0];
  if (url === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', `--publisher ${name} needs --broker-url`);
  return url;
}

/** An entry of the registry, typed and frozen. */
export function definePublisher(entry: CliPublisher): CliPublisher {
  return Object.freeze({ ...entry, flags: Object.freeze([...entry.flags]) });
}
