import type { CommandName, HelpTopic } from './command-names.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import { didYouMean } from './did-you-mean.js';
import { helpPointer } from './help.js';
import { OPTION_DEFINITIONS, optionDefinition } from './option-definitions.js';
import { flagSpelling } from './option-definition.js';

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
  destinations: ['list', 'pause', 'resume'],
  pending: ['list', 'show', 'delete'],
});
type GroupName = 'dead' | 'topics' | 'destinations' | 'pending';

/** The first words of every command, for "did you mean". */
const COMMAND_WORDS: readonly string[] = [...SIMPLE, ...Object.keys(GROUPS), 'help'];

function isGroup(word: string | undefined): word is GroupName {
  return word !== undefined && Object.hasOwn(GROUPS, word);
}

function hasSubcommand(group: GroupName, word: string | undefined): boolean {
  return word !== undefined && (GROUPS[group] ?? []).includes(word);
}

/** What a command takes after its name: message ids, exactly one topic or destination, or nothing. */
const OPERANDS: Partial<Record<CommandName, 'ids' | 'topic' | 'destination'>> = {
  'dead retry': 'ids',
  'dead purge': 'ids',
  'topics pause': 'topic',
  'topics resume': 'topic',
  'destinations pause': 'destination',
  'destinations resume': 'destination',
  'pending show': 'ids',
  'pending delete': 'ids',
};

/** `--lease-ms`, `-h`: flags as the user may write them, for "did you mean". */
const spellFlag = (flag: string) => `--${flag}`;

/** One line that names the unknown option, the option likely meant, and where the options are listed. */
function unknownOption(rawName: string, topic: HelpTopic): UsageError {
  const name = rawName.replace(/^-+/, '');
  const command = SIMPLE.has(topic) || topic.includes(' ') ? (topic as CommandName) : undefined;
  const own = OPTION_DEFINITIONS.filter((d) => command === undefined || d.commands.includes(command)).map((d) => d.flag);
  const where = command === undefined ? '' : ` for '${command}'`;
  return new UsageError(`unknown option '${rawName}'${where}${didYouMean(name, own, spellFlag)} (${helpPointer(topic)})`, topic, 'none');
}

/**
 * Checks every option of argv against the table first, to word each refusal for people (Node's own words are
 * "Unknown option '--x'. To specify a positional argument starting with a '-', place it at the end ..."), then
 * parses strictly.
 */
function parse(argv: readonly string[]): { values: OptionValues; positionals: string[] } {
  const loose = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const topic = topicOf(loose.positionals);
  for (const token of loose.tokens) {
    if (token.kind !== 'option') continue;
    const definition = OPTION_DEFINITIONS.find((d) => d.flag === token.name);
    if (definition === undefined) throw unknownOption(token.rawName, topic);
    if (definition.kind === 'switch') {
      if (token.inlineValue === true) throw new UsageError(`${token.rawName} takes no value: give ${token.rawName} alone`, topic);
    } else if (token.value === undefined) {
      throw new UsageError(`${token.rawName} needs a value: ${flagSpelling(definition)}`, topic);
    } else if (!token.inlineValue && token.value.startsWith('-')) {
      throw new UsageError(
        `${token.rawName} needs a value: ${flagSpelling(definition)} (write ${token.rawName}=${token.value.slice(0, 40)} for a value that starts with a dash)`,
        topic,
      );
    }
  }
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    return { values, positionals };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError((error as Error).message.split(/\.\s|\n/)[0] ?? 'invalid command line', topic);
    }
    throw error;
  }
}

/** The best usage to show for a command line that could not be parsed, from its words (not its options). */
function topicOf(words: readonly string[]): HelpTopic {
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

/** Refuses operands the command does not take: ids only for retry and purge, one topic or destination for pause and resume. */
function checkOperands(command: CommandName, operands: readonly string[]): void {
  const takes = OPERANDS[command];
  if (takes === 'ids') return;
  if (takes !== undefined && operands.length === 0) throw new UsageError(`'${command}' needs a ${takes}`, command);
  const extra = takes === undefined ? operands[0] : operands[1];
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
    throw new UsageError('no command given', 'main', 'full');
  }
  let command: CommandName;
  let operands: string[];
  if (isGroup(first)) {
    const [sub, ...words] = rest;
    if (!hasSubcommand(first, sub)) {
      if (values.help === true && sub === undefined) return { kind: 'help', topic: first };
      const meant = sub === undefined ? '' : didYouMean(sub, GROUPS[first] ?? [], (word) => `'${first} ${word}'`);
      throw new UsageError(sub === undefined ? `'${first}' needs a subcommand: ${subcommandList(first)}` : `unknown command '${first} ${sub}'${meant}`, first);
    }
    command = `${first} ${sub}` as CommandName;
    operands = words;
  } else if (SIMPLE.has(first)) {
    command = first as CommandName;
    operands = rest;
  } else {
    throw new UsageError(`unknown command '${first}'${didYouMean(first, COMMAND_WORDS, (word) => `'${word}'`)}`);
  }
  if (values.help === true) return { kind: 'help', topic: command };
  for (const name of Object.keys(values)) {
    if (!optionDefinition(name).commands.includes(command)) throw new UsageError(`option --${name} does not apply to '${command}'`, command);
  }
  checkOperands(command, operands);
  return { kind: 'run', command, operands, values };
}
