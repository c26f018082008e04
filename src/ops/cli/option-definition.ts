/** One option of the CLI: its flag, variable, section, the commands that take it and where its value goes (option-definitions.ts lists them all). */
import type { RelayOptionsInput } from '../../core/relay-options.js';
import type { StoreTuning } from '../../core/ports/store-dialect.js';
import type { CommandName } from './command-names.js';

/** Which table of docs/cli.md and which block of the help an option belongs to. */
export type OptionSection = 'connection' | 'relay' | 'tuning' | 'store' | 'http' | 'command';

type RelayKey = Exclude<keyof RelayOptionsInput, 'retry' | 'logger' | 'hooks' | 'wakeSignal'>;
type RetryKey = keyof NonNullable<RelayOptionsInput['retry']>;
type StoreKey = keyof StoreTuning;

/** Where a value goes: a relay option, one of the relay's retry policy, or a store option. */
export type OptionTarget = { readonly relay: RelayKey } | { readonly retry: RetryKey } | { readonly store: StoreKey };

interface Common {
  /** The flag without its dashes: `lease-ms`. */
  readonly flag: string;
  readonly short?: 'h';
  readonly env?: string;
  readonly section: OptionSection;
  readonly commands: readonly CommandName[];
  /** One line for `--help`. */
  readonly summary: string;
  /** Added to the summary in docs/cli.md (Markdown). */
  readonly details?: string;
  /** The default as shown; for relay options it is read from `resolveRelayOptions()` when absent. */
  readonly defaultText?: string;
  readonly target?: OptionTarget;
  /**
   * How the option reads for a command that uses it otherwise than `commands[0]` does: its own summary and
   * default, and, when `flagOnly`, flag only (its variable is not read there, so a relay's environment cannot
   * act on the table).
   */
  readonly asUsedBy?: Partial<Record<CommandName, { readonly summary: string; readonly defaultText: string; readonly flagOnly?: true }>>;
}

export type OptionDefinition = Common &
  (
    | { readonly kind: 'text'; readonly placeholder: string }
    | { readonly kind: 'integer' | 'decimal'; readonly placeholder: string; readonly min: number; readonly max: number }
    /** `--flag true|false`, and the environment variable the same. */
    | { readonly kind: 'boolean'; readonly placeholder: '<true|false>' }
    /** `--flag` alone; its environment variable, if any, takes true or false. */
    | { readonly kind: 'switch' }
  );

/** The longest delay Node's timers take; longer ones would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export const ALL_COMMANDS: readonly CommandName[] = [
  'sql',
  'migrate',
  'status',
  'relay',
  'dead list',
  'dead retry',
  'dead purge',
  'topics list',
  'topics pause',
  'topics resume',
  'destinations list',
  'destinations pause',
  'destinations resume',
  'pending list',
  'pending show',
  'pending delete',
];
export const CONNECTED_COMMANDS: readonly CommandName[] = ALL_COMMANDS.filter((command) => command !== 'sql');
export const RELAY_COMMAND: readonly CommandName[] = ['relay'];
export const MIGRATE_COMMAND: readonly CommandName[] = ['migrate'];

/** The one-line summary of an option as `command` uses it. */
export function summaryFor(definition: OptionDefinition, command: CommandName): string {
  return definition.asUsedBy?.[command]?.summary ?? definition.summary;
}

/** The option's variable as `command` reads it: none where the option is flag only. */
export function envFor(definition: OptionDefinition, command: CommandName): string | undefined {
  return definition.asUsedBy?.[command]?.flagOnly === true ? undefined : definition.env;
}

/** `--lease-ms <ms>` */
export function flagSpelling(definition: OptionDefinition): string {
  const value = definition.kind === 'switch' ? '' : ` ${definition.placeholder}`;
  return `${definition.short === undefined ? '' : `-${definition.short}, `}--${definition.flag}${value}`;
}

/** `relay` or `retry.maxAttempts` or `store.retainPublishedMs`: the option's name where it ends up. */
export function targetPath(target: OptionTarget): string {
  if ('relay' in target) return target.relay;
  if ('retry' in target) return `retry.${target.retry}`;
  return target.store;
}
