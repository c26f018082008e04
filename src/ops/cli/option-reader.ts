import { redactUrl } from '../../core/redact.js';
import type { OptionValues } from './args.js';
import type { CommandName } from './command-names.js';
import { UsageError } from './errors.js';
import { optionDefinition } from './option-definitions.js';
import { envFor, type OptionDefinition } from './option-definition.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Source {
  readonly value: string;
  /** How the user spelled it, for error messages: `--lease-ms` or `OUTBOXER_LEASE_MS`. */
  readonly from: string;
}

/** `--lease-ms or OUTBOXER_LEASE_MS`: both ways to set an option, for every message about it. */
export function settableBy(definition: OptionDefinition, command?: CommandName): string {
  const env = command === undefined ? definition.env : envFor(definition, command);
  return env === undefined ? `--${definition.flag}` : `--${definition.flag} or ${env}`;
}

/** Schemes whose URLs have no host, as the docs write them: `sqlite:<file>`, not `sqlite://`. */
const HOSTLESS: Readonly<Record<string, string>> = Object.freeze({ 'sqlite:': 'sqlite:<file>' });

/** `postgres://`, `sqlite:<file>`: how a URL of the scheme starts. */
function spellProtocol(protocol: string): string {
  return HOSTLESS[protocol] ?? `${protocol}//`;
}

/** `a, b or c` */
function listOfChoices(choices: readonly string[]): string {
  return choices.length < 2 ? (choices[0] ?? '') : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1) ?? ''}`;
}

/** Reads options from the flags, then the environment, as the definitions say; every refusal is a UsageError. */
export class OptionReader {
  constructor(
    private readonly values: OptionValues,
    private readonly env: Env,
    private readonly command: CommandName,
  ) {}

  source(flag: string): Source | undefined {
    const given = this.values[flag];
    if (typeof given === 'string') return { value: given, from: `--${flag}` };
    if (given === true) return { value: 'true', from: `--${flag}` };
    const envName = envFor(optionDefinition(flag), this.command);
    const fromEnv = envName === undefined ? undefined : this.env[envName];
    // An empty variable counts as unset (compose files and CI often define them empty).
    return fromEnv === undefined || fromEnv === '' || envName === undefined ? undefined : { value: fromEnv, from: envName };
  }

  isFlag(flag: string): boolean {
    return this.values[flag] !== undefined;
  }

  /** The option's value parsed by its kind, or undefined when neither the flag nor the variable is set. */
  typed(flag: string): string | number | boolean | undefined {
    const definition = optionDefinition(flag);
    const source = this.source(flag);
    if (source === undefined) return undefined;
    switch (definition.kind) {
      case 'text':
        return source.value;
      case 'switch':
      case 'boolean':
        if (source.value === 'true' || source.value === 'false') return source.value === 'true';
        throw this.invalid(definition, source, 'true or false');
      case 'integer':
      case 'decimal': {
        const pattern = definition.kind === 'integer' ? /^\d{1,16}$/ : /^\d{1,16}(\.\d{1,16})?$/;
        const number = pattern.test(source.value) ? Number(source.value) : Number.NaN;
        if (!Number.isFinite(number) || number < definition.min || number > definition.max) {
          const what = definition.kind === 'integer' ? 'a whole number' : 'a number';
          throw this.invalid(definition, source, `${what} from ${definition.min} to ${definition.max}`);
        }
        return number;
      }
    }
  }

  integer(flag: string): number | undefined {
    const value = this.typed(flag);
    return typeof value === 'number' ? value : undefined;
  }

  oneOf<T extends string>(flag: string, choices: readonly T[], fallback: T): T {
    const source = this.source(flag);
    if (source === undefined) return fallback;
    if (!(choices as readonly string[]).includes(source.value)) throw this.invalid(optionDefinition(flag), source, `one of ${choices.join(', ')}`);
    return source.value as T;
  }

  /** Checks one URL of option `flag` (whose value may be a list: `source` is then one of its parts). */
  url(flag: string, source: Source, protocols: readonly string[]): string {
    const both = ` (set by ${settableBy(optionDefinition(flag))})`;
    let protocol: string;
    try {
      protocol = new URL(source.value).protocol;
    } catch {
      throw this.error(`${source.from} is not a valid URL${both}`);
    }
    if (!protocols.includes(protocol)) {
      throw this.error(`${source.from} must start with ${listOfChoices(protocols.map(spellProtocol))}; got ${redactUrl(source.value)}${both}`);
    }
    return source.value;
  }

  invalid(definition: OptionDefinition, source: Source, expected: string): UsageError {
    const both = envFor(definition, this.command) === undefined ? '' : ` (set by ${settableBy(definition, this.command)})`;
    return this.error(`${source.from} must be ${expected}; got ${JSON.stringify(source.value.slice(0, 40))}${both}`);
  }

  error(message: string): UsageError {
    return new UsageError(message, this.command);
  }
}
