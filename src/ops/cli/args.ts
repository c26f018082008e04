import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import type { HelpTopic } from './help.js';
import { OPTION_DEFINITIONS, optionDefinition } from './option-definitions.js';

export type CommandName = 'sql' | 'migrate' | 'status' | 'relay' | 'dead list' | 'dead retry' | 'dead purge';
export type OptionName = string;
export type OptionValues = Readonly<Partial<Record<OptionName, string | boolean>>>;

/** Every flag the CLI knows, for parseArgs; which command accepts which is checked after parsing. */
const OPTIONS: ParseArgsConfig['options'] = Object.fromEntries(
  OPTION_DEFINITIONS.map((definition) => [
    definition.flag,
    { type: definition.kind === 'switch' ? 'boolean' : 'string', ...(definition.short === undefined ? {} : { short: definition.short }) },
  ]),
);

/** What the command line asks for. */
export type Invocation =
  | { readonly kind: 'version' }
  | { readonly kind: 'help'; readonly topic: HelpTopic }
  | { readonly kind: 'run'; readonly command: CommandName; readonly operands: readonly string[]; readonly values: OptionValues };

const SIMPLE = new Set<string>(['sql', 'migrate', 'status', 'relay']);
const DEAD = new Set<string>(['list', 'retry', 'purge']);

function parse(argv: readonly string[]): { values: OptionValues; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    return { values: values as OptionValues, positionals };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError((error as Error).message, topicOf(argv));
    }
    throw error;
  }
}

/** The best usage to show for a command line that could not be parsed. */
function topicOf(argv: readonly string[]): HelpTopic {
  const words = argv.filter((arg) => !arg.startsWith('-'));
  const [first, second] = words;
  if (first === 'dead') return second !== undefined && DEAD.has(second) ? (`dead ${second}` as HelpTopic) : 'dead';
  return first !== undefined && SIMPLE.has(first) ? (first as HelpTopic) : 'main';
}

function helpTopic(words: readonly string[]): HelpTopic {
  const [first, second, ...rest] = words;
  if (first === undefined) return 'main';
  const topic = first === 'dead' && second !== undefined ? `dead ${second}` : first;
  const known = topic === 'dead' || SIMPLE.has(topic) || (first === 'dead' && second !== undefined && DEAD.has(second));
  if (!known || rest.length > 0 || (first !== 'dead' && second !== undefined)) {
    throw new UsageError(`no help for '${words.join(' ')}'`);
  }
  return topic as HelpTopic;
}

/** Parses argv (without node and script) strictly: unknown commands, flags and operands are usage errors. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  const { values, positionals } = parse(argv);
  const [first, ...rest] = positionals;
  if (first === 'help') return { kind: 'help', topic: helpTopic(rest) };
  if (values.version === true) return { kind: 'version' };
  if (first === undefined) {
    if (values.help === true) return { kind: 'help', topic: 'main' };
    throw new UsageError('no command given');
  }
  let command: CommandName;
  let operands: string[];
  if (first === 'dead') {
    const [sub, ...ids] = rest;
    if (sub === undefined || !DEAD.has(sub)) {
      if (values.help === true && sub === undefined) return { kind: 'help', topic: 'dead' };
      throw new UsageError(sub === undefined ? "'dead' needs a subcommand: list, retry or purge" : `unknown command 'dead ${sub}'`, 'dead');
    }
    command = `dead ${sub}` as CommandName;
    operands = ids;
  } else if (SIMPLE.has(first)) {
    command = first as CommandName;
    operands = rest;
  } else {
    throw new UsageError(`unknown command '${first}'`);
  }
  if (values.help === true) return { kind: 'help', topic: command };
  for (const name of Object.keys(values)) {
    if (!optionDefinition(name).commands.includes(command)) throw new UsageError(`option --${name} does not apply to '${command}'`, command);
  }
  if (command !== 'dead retry' && command !== 'dead purge' && operands.length > 0) {
    throw new UsageError(`unexpected argument '${operands[0] ?? ''}' for '${command}'`, command);
  }
  return { kind: 'run', command, operands, values };
}
