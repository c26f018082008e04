/** The option table rendered for people: blocks of `--help`, and the reference section of docs/cli.md. */
import { resolveRelayOptions } from '../../core/relay-options.js';
import type { CommandName } from './command-names.js';
import { OPTION_DEFINITIONS } from './option-definitions.js';
import { envFor, flagSpelling, MAX_TIMER_MS, type OptionDefinition, type OptionSection, summaryFor } from './option-definition.js';

/** The default as documented: the table's own text, or the library's default for a relay option. */
export function defaultText(definition: OptionDefinition): string {
  if (definition.defaultText !== undefined) return definition.defaultText;
  const target = definition.target;
  if (target === undefined || 'store' in target) return '';
  const defaults = resolveRelayOptions();
  return String('relay' in target ? defaults[target.relay] : defaults.retry[target.retry]);
}

function range(definition: OptionDefinition): string {
  if (definition.kind !== 'integer' && definition.kind !== 'decimal') return '';
  const unbounded = definition.max >= Math.floor(MAX_TIMER_MS / 2);
  return unbounded ? `>= ${definition.min}` : `${definition.min}-${definition.max}`;
}

/** `(default 500)`, or `(required)` / `(optional: …)` for an option without a default. */
function helpDefault(definition: OptionDefinition, command: CommandName): string {
  const text = (definition.asUsedBy?.[command]?.defaultText ?? defaultText(definition)).replaceAll('`', '');
  if (text === '') return '';
  return /^(required|optional)\b/.test(text) ? ` (${text})` : ` (default ${text})`;
}

/**
 * Lines of `--help` for the options of `command` in `sections`, in three columns (flag, variable, meaning)
 * aligned across every block of the command's help.
 */
export function helpBlock(command: CommandName, sections: readonly OptionSection[], only?: readonly string[]): string {
  const all = OPTION_DEFINITIONS.filter((d) => d.commands.includes(command));
  const flagWidth = Math.max(...all.map((d) => flagSpelling(d).length));
  const envWidth = Math.max(...all.map((d) => (envFor(d, command) ?? '').length));
  return all
    .filter((d) => sections.includes(d.section) && (only === undefined || only.includes(d.flag)))
    .map((definition) => {
      const bounds = range(definition);
      const meaning = `${summaryFor(definition, command).replaceAll('`', '')}${bounds === '' ? '' : `, ${bounds}`}${helpDefault(definition, command)}`;
      const env = envFor(definition, command) ?? '';
      return `  ${flagSpelling(definition).padEnd(flagWidth)}  ${env.padEnd(envWidth)}  ${meaning}`.trimEnd();
    })
    .join('\n');
}

const TITLES: Readonly<Record<Exclude<OptionSection, 'command'>, string>> = Object.freeze({
  connection: 'Connection (every command; `sql` takes `--schema` and `--table` only)',
  relay: 'Relay: publisher',
  tuning: 'Relay: tuning (the relay options of the library)',
  store: 'Relay: store options',
  http: 'Relay: HTTP server of operations (off unless a port is given)',
});

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The Markdown tables of the configuration options (not the per-command flags), one per section. */
export function markdownReference(): string {
  const parts: string[] = [];
  for (const [section, title] of Object.entries(TITLES) as [OptionSection, string][]) {
    parts.push(`### ${title}`, '', '| Flag | Environment | Default | Meaning |', '|---|---|---|---|');
    for (const definition of OPTION_DEFINITIONS.filter((d) => d.section === section)) {
      const bounds = range(definition);
      const fallback = defaultText(definition);
      const meaning = `${definition.summary}${bounds === '' ? '' : ` (${bounds.replace('-', '–')})`}.${definition.details === undefined ? '' : ` ${definition.details}`}`;
      const env = definition.env === undefined ? '' : `\`${definition.env}\``;
      // Values in code spans; words (required, none, off) and sentences as they are.
      const shownDefault = /^[\w./-]+$/.test(fallback) && !/^(required|none|off)$/.test(fallback) ? `\`${fallback}\`` : fallback;
      parts.push(`| \`${cell(flagSpelling(definition))}\` | ${env} | ${cell(shownDefault)} | ${cell(meaning)} |`);
    }
    parts.push('');
  }
  return parts.join('\n');
}

export const REFERENCE_BEGIN = '<!-- BEGIN option reference: generated from src/ops/cli/option-definitions.ts by `npm run docs:cli`; do not edit -->';
export const REFERENCE_END = '<!-- END option reference -->';

/** `markdown` with its generated section replaced by the current reference. */
export function withCurrentReference(markdown: string): string {
  const begin = markdown.indexOf(REFERENCE_BEGIN);
  const end = markdown.indexOf(REFERENCE_END);
  if (begin < 0 || end < begin) throw new Error(`the document has no section between "${REFERENCE_BEGIN}" and "${REFERENCE_END}"`);
  return `${markdown.slice(0, begin)}${REFERENCE_BEGIN}\n\n${markdownReference()}\n${markdown.slice(end)}`;
}
