import type { OptionReader } from './option-reader.js';
import type { PublisherFlagValue, PublisherSettings } from './publishers/cli-publisher.js';
import { CLI_PUBLISHERS, cliPublisher, PUBLISHER_NAMES, publishersReading } from './publishers/registry.js';

const listed = (names: readonly string[]) => (names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`);

/** A publisher of the registry with its broker URLs and the flags of its own that were set. */
export interface PublisherChoice {
  /** A name of the publisher registry (`publishers/registry.ts`). */
  readonly publisher: string;
  readonly publisherSettings: PublisherSettings;
  /** The same broker URLs, for the start checks and the start log. */
  readonly brokerUrls: readonly string[];
}

/** The publisher `reader` names (`--publisher`), its broker URLs and its own flags; refuses flags of other publishers. */
export function resolvePublisherChoice(reader: OptionReader): PublisherChoice {
  const publisher = reader.oneOf<string>('publisher', PUBLISHER_NAMES, 'console');
  const entry = cliPublisher(publisher);
  const refuse = (flag: string) => {
    if (reader.isFlag(flag)) throw reader.error(`--${flag} applies only to ${listed(publishersReading(flag))}, not to --publisher ${publisher}`);
  };
  let brokerUrls: string[] = [];
  if (entry.brokerUrl === undefined) refuse('broker-url');
  else {
    const source = reader.source('broker-url');
    if (source === undefined) throw reader.error(`--publisher ${publisher} needs --broker-url or OUTBOXER_BROKER_URL`);
    const parts = entry.brokerUrl.list === true ? source.value.split(',').map((part) => part.trim()) : [source.value];
    brokerUrls = parts.map((part) => reader.url('broker-url', { value: part, from: source.from }, entry.brokerUrl?.protocols ?? []));
  }
  for (const other of CLI_PUBLISHERS) for (const flag of other.flags) if (!entry.flags.includes(flag)) refuse(flag);
  const flags: Record<string, PublisherFlagValue> = {};
  for (const flag of entry.flags) {
    const value = reader.typed(flag);
    if (value !== undefined) flags[flag] = value;
  }
  return {
    publisher,
    publisherSettings: Object.freeze({ brokerUrls: Object.freeze(brokerUrls), flags: Object.freeze(flags) }),
    brokerUrls: Object.freeze(brokerUrls),
  };
}
