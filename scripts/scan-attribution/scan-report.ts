import { writeFileSync } from 'node:fs';
import type { SentStatement } from './count-statements.js';
import type { Counters } from './scan-counters.js';
import type { VariantTiming } from './time-variants.js';

/** The Markdown report, printed line by line as it is made and written to a file at the end with the plans. */
export class ScanReport {
  readonly #out: string[] = [];

  say(line = ''): void {
    console.log(line);
    this.#out.push(line);
  }

  drain(rows: number, drainSeconds: number, left: number | undefined): void {
    this.say(`# Scan attribution: ${rows.toLocaleString('en-US')} rows drained by outbox.createRelay (library defaults) to RabbitMQ`);
    this.say(`drain ${drainSeconds.toFixed(1)} s (${Math.round(rows / drainSeconds)} msg/s), rows left ${left}`);
  }

  counterDeltas(before: Counters, after: Counters, rows: number): void {
    this.say();
    this.say('## Counter deltas over the drain (pg_stat_user_tables / _indexes)');
    this.say('| counter | delta | per message |');
    this.say('|---|---|---|');
    for (const [name, value] of after) {
      const d = value - (before.get(name) ?? 0);
      if (d !== 0 || name.includes('idx_scan')) this.say(`| ${name} | ${d} | ${(d / rows).toFixed(3)} |`);
    }
  }

  statements(kinds: readonly [string, SentStatement][]): void {
    this.say();
    this.say('## Statements the relay sent (at the driver)');
    this.say('| statement | count | array sizes (read: partitions; others: longest array) min / mean / max |');
    this.say('|---|---|---|');
    for (const [kind, entry] of kinds) {
      const sizes = entry.arrays;
      const mean = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
      this.say(`| ${kind.replaceAll('|', '/')} | ${entry.count} | ${Math.min(...sizes)} / ${mean.toFixed(1)} / ${Math.max(...sizes)} |`);
    }
  }

  perExecution(
    perExecution: ReadonlyMap<string, Counters[]>,
    readRows: number,
    prepared: readonly { statement: string; generic_plans: string; custom_plans: string }[],
  ): void {
    this.say();
    this.say(
      `## Scans per execution, each statement alone (BEGIN ... ROLLBACK; runs 1..n as the relay runs it: prepared, generic from run 6 if cheaper; the read returned ${readRows} rows)`,
    );
    for (const [label, runs] of perExecution) {
      const names = [...new Set(runs.flatMap((r) => [...r.keys()]))].sort();
      this.say(`- **${label}**: ${names.map((name) => `${name} ${runs.map((r) => r.get(name) ?? 0).join('/')}`).join('; ') || 'no scan'}`);
    }
    this.say(
      `- plans the connection's prepared statements used after 8 runs: ${prepared.map((r) => `"${r.statement.trim()}…" generic ${r.generic_plans}, custom ${r.custom_plans}`).join('; ')}`,
    );
  }

  variants(timings: ReadonlyMap<string, VariantTiming>, readRows: number, completeRows: number): void {
    this.say();
    this.say(
      `## Variants on the same rows (EXPLAIN ANALYZE, TIMING OFF, median of 10 after two timed runs, custom and generic interleaved; read: ${readRows} rows, complete: ${completeRows} rows)`,
    );
    this.say('| statement | plan | execution ms | µs per row | planning ms | WAL records | scans |');
    this.say('|---|---|---|---|---|---|---|');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    for (const [key, entry] of [...timings].sort((a, b) => a[0].localeCompare(b[0]))) {
      const [label, mode] = key.split(' | ');
      const ms = median(entry.ms);
      const perRow = label?.includes('read') ? readRows : completeRows;
      this.say(
        `| ${label} | ${mode} | ${ms.toFixed(2)} | ${((ms * 1000) / perRow).toFixed(2)} | ${median(entry.planMs).toFixed(2)} | ${entry.wal} | ${[...entry.scans].map(([n, c]) => `${n.replace(' idx_scan', '').replace(' seq_scan', ' (seq)')} ${c}`).join(', ')} |`,
      );
    }
  }

  table(schema: string, indexes: readonly { indexdef: string }[], triggers: readonly { def: string }[]): void {
    this.say();
    this.say('## The table');
    for (const index of indexes) this.say(`- ${index.indexdef.replace(`"${schema}".`, '').replace(`${schema}.`, '')}`);
    for (const trigger of triggers) this.say(`- trigger ${trigger.def.replaceAll(`${schema}.`, '').replaceAll(`"${schema}".`, '')}`);
  }

  /** Writes what was said, then the plans (not printed: too long for a terminal), to `outFile`. */
  write(outFile: string, plans: readonly string[]): void {
    this.say();
    this.say('## Plans');
    this.#out.push(...plans);
    writeFileSync(outFile, `${this.#out.join('\n')}\n`);
    console.log(`\nwritten to ${outFile} (with the plans)`);
  }
}
