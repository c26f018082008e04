import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';
import type { HelpTopic } from './help.js';

/** Every flag the CLI knows; which command accepts which is checked after parsing. */
const OPTIONS = {
  'database-url': { type: 'string' },
  schema: { type: 'string' },
  table: { type: 'string' },
  'log-level': { type: 'string' },
  publisher: { type: 'string' },
  'broker-url': { type: 'string' },
  exchange: { type: 'string' },
  'subject-prefix': { type: 'string' },
  'batch-size': { type: 'string' },
  'lease-ms': { type: 'string' },
  'publish-timeout-ms': { type: 'string' },
  'poll-interval-ms': { type: 'string' },
  'max-attempts': { type: 'string' },
  'retain-published-ms': { type: 'string' },
  migrate: { type: 'boolean' },
  json: { type: 'boolean' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type CommandName = 'sql' | 'migrate' | 'status' | 'relay' | 'dead list' | 'dead retry' | 'dead purge';
export type OptionValues = Readonly<Partial<Record<OptionName, string | boolean>>>;

const CONNECTION: readonly OptionName[] = ['database-url', 'schema', 'table', 'log-level'];

const ALLOWED: Readonly<Record<CommandName, readonly OptionName[]>> = Object.freeze({
  sql: ['schema', 'table'],
  migrate: CONNECTION,
  status: [...CONNECTION, 'json'],
  relay: [
    ...CONNECTION,
    'publisher',
    'broker-url',
    'exchange',
    'subject-prefix',
    'batch-size',
    'lease-ms',
    'publish-timeout-ms',
    'poll-interval-ms',
    'max-attempts',
    'retain-published-ms',
    'migrate',
  ],
  'dead list': [...CONNECTION, 'json', 'limit'],
  'dead retry': [...CONNECTION, 'all'],
  'dead purge': [...CONNECTION, 'all'],
});

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
  const allowed = ALLOWED[command];
  for (const name of Object.keys(values) as OptionName[]) {
    if (name !== 'help' && !allowed.includes(name)) throw new UsageError(`option --${name} does not apply to '${command}'`, command);
  }
  if (command !== 'dead retry' && command !== 'dead purge' && operands.length > 0) {
    throw new UsageError(`unexpected argument '${operands[0] ?? ''}' for '${command}'`, command);
  }
  return { kind: 'run', command, operands, values };
}
