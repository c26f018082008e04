import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv } from '../support/cli-runner.js';
import { services, uniqueName } from '../support/services.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const packageJson = () => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }> };

beforeAll(async () => {
  await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { timeout: 120_000 });
}, 130_000);

/** What a user gets from `import ... from 'outboxer/...'`: the built package, resolved through its exports map. */
describe('published package surface', () => {
  it.each([
    [
      'outboxer',
      ['Outbox', 'Relay', 'OutboxerError', 'MessageValidationError', 'PublishError', 'redactUrl', 'validateMessage', 'failureAction', 'isMisconfiguration'],
    ],
    ['outboxer/postgres', ['PostgresOutboxStore', 'fromPgPool', 'safePoolConfig', 'migrationScript']],
    ['outboxer/pglite', ['PostgresOutboxStore', 'fromPglite']],
    ['outboxer/mysql', ['MysqlOutboxStore', 'fromMysqlPool', 'mysqlMigrations']],
    ['outboxer/sqlite', ['SqliteOutboxStore', 'openSqliteStore', 'fromBetterSqlite3', 'sqliteMigrations']],
    ['outboxer/kysely', ['fromKysely']],
    ['outboxer/knex', ['fromKnex']],
    ['outboxer/drizzle', ['fromDrizzle', 'betterSqliteTransaction']],
    ['outboxer/prisma', ['fromPrisma', 'PRISMA_FIX']],
    ['outboxer/typeorm', ['fromTypeOrm']],
    ['outboxer/mikro-orm', ['fromMikroOrm']],
    ['outboxer/sequelize', ['fromSequelize']],
    ['outboxer/rabbitmq', ['createRabbitMqPublisher']],
    ['outboxer/nats', ['createNatsPublisher']],
    ['outboxer/redis', ['createRedisPublisher']],
    ['outboxer/mqtt', ['createMqttPublisher']],
    ['outboxer/webhook', ['createWebhookPublisher']],
    ['outboxer/pubsub', ['createPubSubPublisher']],
    ['outboxer/sqs', ['createSqsPublisher']],
    ['outboxer/sns', ['createSnsPublisher']],
    ['outboxer/amqp10', ['createAmqp10Publisher']],
    ['outboxer/console', ['createConsolePublisher']],
    ['outboxer/consumer', ['Inbox', 'MessageRegistry', 'PostgresInboxStore', 'InboxRetention', 'UnknownMessageTypeError']],
    ['outboxer/consumer/rabbitmq', ['createRabbitMqConsumer']],
    ['outboxer/consumer/nats', ['createNatsConsumer']],
    ['outboxer/consumer/mysql', ['MysqlInboxStore']],
    ['outboxer/consumer/sqlite', ['SqliteInboxStore']],
    ['outboxer/metrics', ['OutboxerMetrics']],
    ['outboxer/otel', ['createOtelInstrumentation', 'tracePublisher', 'createEnqueueTracing', 'createDeliveryTracing']],
    ['outboxer/http', ['createOpsServer']],
  ])('%s exports its API', async (specifier, names) => {
    const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    const exported = JSON.parse(stdout) as string[];
    for (const name of names) expect(exported).toContain(name);
  });

  it('has no side effects at import: importing every entry point prints nothing and leaves no handle open', async () => {
    const script = `for (const s of ['outboxer','outboxer/postgres','outboxer/pglite','outboxer/mysql','outboxer/sqlite','outboxer/kysely','outboxer/knex','outboxer/drizzle','outboxer/prisma','outboxer/typeorm','outboxer/mikro-orm','outboxer/sequelize','outboxer/rabbitmq','outboxer/nats','outboxer/redis','outboxer/mqtt','outboxer/webhook','outboxer/pubsub','outboxer/sqs','outboxer/sns','outboxer/amqp10','outboxer/console','outboxer/consumer','outboxer/consumer/rabbitmq','outboxer/consumer/nats','outboxer/consumer/mysql','outboxer/consumer/sqlite','outboxer/metrics','outboxer/otel','outboxer/http']) await import(s);`;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 });
    expect(stdout).toBe('');
    expect(stderr).toBe('');
  });

  it('loads no ORM or driver at run time from an adapter subpath: each is a structural shim over the ORM you installed', async () => {
    const adapters = join(ROOT, 'dist', 'adapters');
    const files = readdirSync(adapters, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThanOrEqual(7);
    const bare = files.flatMap((file) =>
      [
        ...readFileSync(join(adapters, file), 'utf8').matchAll(
          /^(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm,
        ),
      ]
        .map((match) => (match[1] ?? match[2] ?? match[3]) as string)
        .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
        .map((specifier) => `${file} imports ${specifier}`),
    );
    expect(bare).toEqual([]);
  });

  /** A CommonJS application (a NestJS service compiled to CommonJS) with outboxer installed, as npm lays it out. */
  const commonJsApp = (): string => {
    const app = mkdtempSync(join(tmpdir(), 'outboxer-cjs-'));
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(ROOT, join(app, 'node_modules', 'outboxer'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'cjs-app', private: true, type: 'commonjs' }));
    return app;
  };

  it('require() from CommonJS gives the root and every subpath, on a Node that can require() an ES module (20.19+, 22.12+)', async () => {
    const app = commonJsApp();
    try {
      const script = `
        const subpaths = ${JSON.stringify(Object.keys(packageJson().exports).map((path) => `outboxer${path.slice(1)}`))};
        const exported = {};
        for (const subpath of subpaths) {
          try { exported[subpath] = Object.keys(require(subpath)); } catch (error) { exported[subpath] = error.code; }
        }
        // one module instance: require() and import() give the same namespace, so classes and instanceof agree
        import('outboxer').then((esm) => console.log(JSON.stringify({ exported, same: esm === require('outboxer') })));`;
      writeFileSync(join(app, 'main.cjs'), script);
      const { stdout, stderr } = await run(process.execPath, ['main.cjs'], { cwd: app, timeout: 20_000 });
      const { exported, same } = JSON.parse(stdout) as { exported: Record<string, string[] | string>; same: boolean };
      if (!process.features.require_module) {
        // Node 20.0-20.18 and 22.0-22.11 (without --experimental-require-module): refused with a clear error, use import()
        expect(new Set(Object.values(exported))).toEqual(new Set(['ERR_REQUIRE_ESM']));
        return;
      }
      expect(stderr).toBe(''); // no ExperimentalWarning, no ERR_REQUIRE_ASYNC_MODULE: no module in the graph awaits at top level
      expect(Object.values(exported).filter((names) => !Array.isArray(names))).toEqual([]);
      expect(exported.outboxer).toEqual(expect.arrayContaining(['Outbox', 'Relay', 'OutboxerError', 'PublishError', 'validateMessage']));
      expect(exported['outboxer/postgres']).toEqual(expect.arrayContaining(['PostgresOutboxStore', 'fromPgPool', 'migrationScript']));
      expect(exported['outboxer/rabbitmq']).toEqual(expect.arrayContaining(['createRabbitMqPublisher']));
      expect(exported['outboxer/consumer']).toEqual(expect.arrayContaining(['Inbox', 'MessageRegistry', 'PostgresInboxStore']));
      expect(same).toBe(true);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('a CommonJS TypeScript service (module nodenext, TypeScript 5.8+) type-checks its imports of outboxer, compiles them to require() and runs', async () => {
    const app = commonJsApp();
    try {
      writeFileSync(
        join(app, 'main.ts'),
        [
          "import { Outbox } from 'outboxer';",
          "import { PostgresOutboxStore } from 'outboxer/postgres';",
          "import { createRabbitMqPublisher } from 'outboxer/rabbitmq';",
          "import { Inbox } from 'outboxer/consumer';",
          'console.log([Outbox, PostgresOutboxStore, createRabbitMqPublisher, Inbox].map((value) => typeof value).join(" "));',
          '',
        ].join('\n'),
      );
      const compilerOptions = { module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true, types: [], outDir: 'out' };
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }));
      await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { timeout: 60_000 });
      expect(readFileSync(join(app, 'out', 'main.js'), 'utf8')).toContain('require("outboxer/postgres")');
      if (!process.features.require_module) return; // compiled as above; running it needs require(esm)
      const { stdout } = await run(process.execPath, ['out/main.js'], { cwd: app, timeout: 20_000 });
      expect(stdout.trim()).toBe('function function function function');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('packs its license, and the sources every shipped source map points at', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, timeout: 60_000 });
    const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const files = new Set(packed.files.map((file) => file.path));
    expect(files).toContain('LICENSE');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the outboxer authors\n/);
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
    const maps = [...files].filter((path) => path.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(ROOT, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const path = normalize(join(dirname(map), source));
        if (!files.has(path)) missing.push(`${map} -> ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the relay run as a daemon, the documented way', () => {
  let pool: pg.Pool;
  let app: string;
  const schema = uniqueName('daemon');

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: services.postgresUrl, max: 2 });
    // An application directory as npm installs outboxer into it: the package, and its bin linked in node_modules/.bin.
    app = mkdtempSync(join(tmpdir(), 'outboxer-app-'));
    mkdirSync(join(app, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(ROOT, join(app, 'node_modules', 'outboxer'), 'dir');
    symlinkSync('../outboxer/dist/ops/cli/main.js', join(app, 'node_modules', '.bin', 'outboxer'));
    chmodSync(join(ROOT, 'dist', 'ops', 'cli', 'main.js'), 0o755); // as npm does for a bin at install
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
    rmSync(app, { recursive: true, force: true });
  });

  it('the exec entrypoint of docs/examples hands SIGTERM to the relay: it stops gracefully, exit 0, nothing leased or lost', async () => {
    const table = `"${schema}".outbox`;
    const env = cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: schema, OUTBOXER_MIGRATE: 'true' });
    const relay = new CliProcess(['--poll-interval-ms', '50', '--batch-size', '200'], env, {
      command: join(ROOT, 'docs', 'examples', 'relay-entrypoint.sh'),
      cwd: app,
    });
    try {
      await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
      // `exec` replaced the shell: the process the container runtime signals is the relay itself.
      const command = readFileSync(`/proc/${relay.child.pid}/cmdline`, 'utf8').split('\0');
      expect(command[0]).toMatch(/(^|\/)node$/);
      expect(command[1]).toBe('node_modules/.bin/outboxer');

      const inserted = await pool.query(
        `INSERT INTO ${table} (topic, key, type, payload) SELECT 'orders.created', 'k' || (n % 50), 'order.created', '{}'::jsonb
         FROM generate_series(1, 20000) AS n RETURNING id::text AS id`,
      );
      const ids = (inserted.rows as { id: string }[]).map((row) => row.id);
      // Signalled while it works through the backlog.
      await relay.waitForOutput((out) => out.stdout.includes('[outboxer] orders.created'), 'the first publish');
      const result = await relay.stop('SIGTERM', 30_000);
      expect(result.code, result.stderr).toBe(0);
      expect(result.signal).toBeNull();
      expect(result.stderr).toContain('"relay stopped"');

      const published = result.stdout.split('\n').flatMap((line) => /id=([0-9a-f-]{36})/.exec(line)?.[1] ?? []);
      const left = (await pool.query(`SELECT id::text AS id FROM ${table}`)).rows.map((row: { id: string }) => row.id);
      expect(new Set(published).size).toBe(published.length);
      expect([...published, ...left].sort()).toEqual([...ids].sort());
    } finally {
      if (relay.running) await relay.stop('SIGKILL');
    }
  });

  it("docs/cli.md shows the entrypoint's commands as shipped", () => {
    const commands = (text: string) => text.split('\n').filter((line) => line !== '' && !line.startsWith('# ') && line !== '#');
    const script = readFileSync(join(ROOT, 'docs', 'examples', 'relay-entrypoint.sh'), 'utf8');
    const docs = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const shown = /```sh\n(#!\/bin\/sh\n[^`]*)```/.exec(docs)?.[1] ?? '';
    expect(commands(shown)).toEqual(commands(script));
    expect(commands(script)).toEqual(['#!/bin/sh', 'set -eu', 'exec node_modules/.bin/outboxer relay "$@"']);
  });

  it('the systemd unit of docs/examples is valid, and stops the relay with SIGTERM', async () => {
    const unit = join(ROOT, 'docs', 'examples', 'outboxer-relay.service');
    const { stderr } = await run('systemd-analyze', ['verify', unit], { timeout: 30_000 });
    expect(stderr).toBe('');
    const text = readFileSync(unit, 'utf8');
    expect(text).toMatch(/^ExecStart=\/usr\/bin\/node \S+\/node_modules\/outboxer\/dist\/ops\/cli\/main\.js relay$/m);
    expect(text).toMatch(/^KillSignal=SIGTERM$/m);
    expect(text).toMatch(/^TimeoutStopSec=\d+$/m);
  });
});
