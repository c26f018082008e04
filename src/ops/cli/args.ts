import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import type { HelpTopic } from './help.js';
import { OPTION_DEFINITIONS, optionDefinition } from './option-definitions.js';

export type CommandName =
  | 'sql'
  | 'migrate'
  | 'status'
  | 'relay'
  | 'dead list'
  | 'dead retry'
  | 'dead purge'
  | 'topics list'
  | 'topics pause'
  | 'topics resume';
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
/** Commands with subcommands, each with its subcommands as the refusal lists them. */
const GROUPS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  dead: ['list', 'retry', 'purge'],
  topics: ['list', 'pause', 'resume'],
});
type GroupName = 'dead' | 'topics';

function isGroup(word: string | undefined): word is GroupName {
  return word !== undefined && Object.hasOwn(GROUPS, word);
}

function hasSubcommand(group: GroupName, word: string | undefined): boolean {
  return word !== undefined && (GROUPS[group] ?? []).includes(word);
}

/** What a command takes after its name: message ids, exactly one topic, or nothing. */
const OPERANDS: Partial<Record<CommandName, 'ids' | 'topic'>> = {
  'dead retry': 'ids',
  'dead purge': 'ids',
  'topics pause': 'topic',
  'topics resume': 'topic',
};

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
  if (isGroup(first)) return hasSubcommand(first, second) ? (`${first} ${second}` as HelpTopic) : first;
  return first !== undefined && SIMPLE.has(first) ? (first as HelpTopic) : 'main';
}

function helpTopic(words: readonly string[]): HelpTopic {
  const [first, second, ...rest] = words;
  if (first === undefined) return 'main';
  if (rest.length === 0 && isGroup(first) && (second === undefined || hasSubcommand(first, second))) {
    return (second === undefined ? first : `${first} ${second}`) as HelpTopic;
  }
  if (rest.length === 0 && second === undefined && SIMPLE.has(first)) return first as HelpTopic;
  throw new UsageError(`no help for '${words.join(' ')}'`);
}

/** `'dead' needs a subcommand: list, retry or purge` */
function subcommandList(group: GroupName): string {
  const names = [...(GROUPS[group] ?? [])];
  const last = names.pop() ?? '';
  return `${names.join(', ')} or ${last}`;
}

/** Refuses operands the command does not take: ids only for retry and purge, one topic for pause and resume. */
function checkOperands(command: CommandName, operands: readonly string[]): void {
  const takes = OPERANDS[command];
  if (takes === 'ids') return;
  if (takes === 'topic' && operands.length === 0) throw new UsageError(`'${command}' needs a topic`, command);
  const extra = takes === 'topic' ? operands[1] : operands[0];
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra.slice(0, 60)}' for '${command}'`, command);
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
  if (isGroup(first)) {
    const [sub, ...words] = rest;
    if (!hasSubcommand(first, sub)) {
      if (values.help === true && sub === undefined) return { kind: 'help', topic: first };
      throw new UsageError(sub === undefined ? `'${first}' needs a subcommand: ${subcommandList(first)}` : `unknown command '${first} ${sub}'`, first);
    }
    command = `${first} ${sub}` as CommandName;
    operands = words;
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
  checkOperands(command, operands);
  return { kind: 'run', command, operands, values };
}
