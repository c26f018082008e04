import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import type pg from 'pg';
import { brokerVersions } from '../support/broker-target.js';
import { mysqlConditions } from '../support/mysql-bench.js';
import { sqliteConditions } from '../support/sqlite-bench.js';

/** The machine and servers a run happened on: numbers mean nothing without them. */
export interface Conditions {
  readonly date: string;
  readonly commit: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly loadAverageAtStart: string;
  readonly node: string;
  readonly postgres: string;
  readonly postgresSettings: Record<string, string>;
  readonly rabbitmq: string;
  readonly nats: string;
  /** Version and settings of MariaDB and SQLite, when a contender of the run uses them. */
  readonly mariadb?: string;
  readonly sqlite?: string;
}

function packageVersion(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const PG_SETTINGS = ['shared_buffers', 'synchronous_commit', 'wal_level', 'max_connections', 'autovacuum'];

export async function collectConditions(admin: pg.Client, databases: ReadonlySet<'mariadb' | 'sqlite'> = new Set()): Promise<Conditions> {
  const version = (await admin.query('SHOW server_version')).rows[0] as { server_version: string };
  const settings = await admin.query('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)', [PG_SETTINGS]);
  const postgresSettings: Record<string, string> = {};
  for (const row of settings.rows as { name: string; setting: string; unit: string | null }[]) {
    postgresSettings[row.name] = row.unit === '8kB' ? `${(Number(row.setting) * 8) / 1024} MB` : `${row.setting}${row.unit ?? ''}`;
  }
  const brokers = await brokerVersions();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    if (dirty !== '') commit += ' + uncommitted changes in src/';
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    commit,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverageAtStart: loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
    node: process.version,
    postgres: version.server_version,
    postgresSettings,
    rabbitmq: brokers.rabbitmq,
    nats: brokers.nats,
    ...(databases.has('mariadb') ? { mariadb: `${await mysqlConditions()}, mysql2 ${packageVersion('mysql2')}` } : {}),
    ...(databases.has('sqlite') ? { sqlite: `${sqliteConditions()}, better-sqlite3 ${packageVersion('better-sqlite3')}` } : {}),
  };
}
