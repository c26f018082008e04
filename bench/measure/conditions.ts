import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import type pg from 'pg';
import { brokerVersions } from '../support/broker-target.js';

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
}

const PG_SETTINGS = ['shared_buffers', 'synchronous_commit', 'wal_level', 'max_connections', 'autovacuum'];

export async function collectConditions(admin: pg.Client): Promise<Conditions> {
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
    loadAverageAtStart: loadavg().map((value) => value.toFixed(2)).join(' '),
    node: process.version,
    postgres: version.server_version,
    postgresSettings,
    rabbitmq: brokers.rabbitmq,
    nats: brokers.nats,
  };
}
