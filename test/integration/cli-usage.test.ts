import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectUsageError, unreachable, version } from '../support/cli-fixtures.js';
import { cliEnv, runCli } from '../support/cli-runner.js';

describe('outboxer CLI: usage', () => {
  it('prints the version and the help, with exit 0', async () => {
    const env = cliEnv();
    const [versionResult, help, relayHelp, deadHelp, topicsHelp] = await Promise.all([
      runCli(['--version'], env),
      runCli(['help'], env),
      runCli(['relay', '--help'], env),
      runCli(['help', 'dead', 'retry'], env),
      runCli(['topics', 'pause', '--help'], env),
    ]);
    expect(versionResult).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(help.code).toBe(0);
    for (const command of [
      'migrate',
      'sql',
      'relay',
      'status',
      'dead list',
      'dead retry',
      'dead purge',
      'topics list',
      'topics pause',
      'topics resume',
      'destinations list',
      'destinations pause',
      'destinations resume',
    ]) {
      expect(help.stdout).toContain(command);
    }
    expect(relayHelp.code).toBe(0);
    expect(relayHelp.stdout).toContain('--publisher');
    expect(relayHelp.stdout).toContain('OUTBOXER_BROKER_URL');
    expect(deadHelp).toMatchObject({ code: 0, stderr: '' });
    expect(deadHelp.stdout).toContain('Usage: outboxer dead retry');
    expect(topicsHelp).toMatchObject({ code: 0, stderr: '' });
    expect(topicsHelp.stdout).toMatch(/^Usage: outboxer topics pause <topic> \[--reason <text>\]/);
    expect(relayHelp.stdout).toMatch(/--tracing\s+OUTBOXER_TRACING\s+an OpenTelemetry publish span per publish/);
  });

  // The database URL points nowhere: exit 2 (not 1) proves the input is refused before any connection.
  const nowhere = { OUTBOXER_DATABASE_URL: unreachable('nowhere-password') };
  const uuid = randomUUID();
  it.concurrent.each([
    [[], {}, /no command given/],
    [['frobnicate'], {}, /unknown command 'frobnicate'/],
    [['dead'], {}, /needs a subcommand/],
    [['dead', 'resurrect'], {}, /unknown command 'dead resurrect'/],
    [['relay', '--lease-ms'], {}, /^outboxer: --lease-ms needs a value: --lease-ms <ms>\n/],
    [['relay', '--migrate=yes'], {}, /^outboxer: --migrate takes no value: give --migrate alone\n/],
    [['stauts'], {}, /^outboxer: unknown command 'stauts'; did you mean 'status'\?\n/],
    [['dead', 'retyr'], {}, /^outboxer: unknown command 'dead retyr'; did you mean 'dead retry'\?\n/],
    [['status', '--limit', '3'], {}, /--limit does not apply to 'status'/],
    [['status', 'extra'], {}, /unexpected argument 'extra'/],
    [['dead', 'list', '--limit', 'abc'], {}, /--limit must be a whole number/],
    [['dead', 'list', '--limit', '0'], {}, /--limit must be a whole number from 1/],
    [['relay', '--batch-size', '1.5'], {}, /--batch-size must be a whole number/],
    [['relay', '--lease-ms', '-5'], {}, /lease-ms/],
    [['relay'], { OUTBOXER_BATCH_SIZE: 'many' }, /OUTBOXER_BATCH_SIZE must be a whole number/],
    [['relay', '--lease-ms', '5000'], {}, /relay option leaseMs \(5000\) must be at least 3 x publishTimeoutMs \(10000\)/],
    [['relay', '--publisher', 'kafka'], {}, /--publisher must be one of console, rabbitmq, nats/],
    [['relay', '--publisher', 'rabbitmq'], {}, /needs --broker-url or OUTBOXER_BROKER_URL/],
    [['relay', '--publisher', 'nats', '--broker-url', 'http://127.0.0.1:4222'], {}, /must start with nats:\/\//],
    [['relay', '--exchange', 'x'], {}, /--exchange applies only to rabbitmq/],
    [['relay', '--log-level', 'loud'], {}, /--log-level must be one of debug, info, warn, error/],
    [['relay', '--lanes', '17'], {}, /--lanes must be a whole number from 1 to 16; got "17" \(set by --lanes or OUTBOXER_LANES\)/],
    [
      ['relay'],
      { OUTBOXER_RETRY_JITTER: '2' },
      /OUTBOXER_RETRY_JITTER must be a number from 0 to 1; got "2" \(set by --retry-jitter or OUTBOXER_RETRY_JITTER\)/,
    ],
    [
      ['relay', '--prepared-statements', 'off'],
      {},
      /--prepared-statements must be true or false; got "off" \(set by --prepared-statements or OUTBOXER_PREPARED_STATEMENTS\)/,
    ],
    [
      ['relay', '--error-backoff-ms', '900'],
      { OUTBOXER_MAX_ERROR_BACKOFF_MS: '800' },
      /maxErrorBackoffMs must be >= errorBackoffMs \(set by --error-backoff-ms or OUTBOXER_ERROR_BACKOFF_MS; --max-error-backoff-ms or OUTBOXER_MAX_ERROR_BACKOFF_MS\)/,
    ],
    [['status', '--lanes', '2'], {}, /--lanes does not apply to 'status'/],
    [['dead', 'retry'], {}, /give the ids of the dead messages, or --all/],
    [['dead', 'retry', '--all', uuid], {}, /either message ids or --all, not both/],
    [['dead', 'purge', uuid, 'not-a-uuid'], {}, /not a message id \(UUID\): "not-a-uuid"/],
    [['status', '--schema', 'x"; DROP TABLE outbox; --'], {}, /schema must match/],
    [
      ['status', '--database-url', 'mongodb://root@127.0.0.1/test'],
      {},
      /--database-url must start with postgres:\/\/, postgresql:\/\/, mysql:\/\/, mariadb:\/\/ or sqlite:<file>; got mongodb:/,
    ],
    [['status'], { OUTBOXER_DATABASE_URL: '' }, /--database-url or OUTBOXER_DATABASE_URL is required/],
    [['relay', '--http-host', '0.0.0.0'], {}, /--http-host applies only with --http-port \(or OUTBOXER_HTTP_PORT\)/],
    [['relay', '--admin-token', 'a-token-long-enough-here'], {}, /--admin-token applies only with --http-port/],
    [['relay', '--http-port', '65536'], {}, /--http-port must be a whole number from 0 to 65535; got "65536" \(set by --http-port or OUTBOXER_HTTP_PORT\)/],
    [['relay'], { OUTBOXER_HTTP_PORT: 'http' }, /OUTBOXER_HTTP_PORT must be a whole number from 0 to 65535/],
    [
      ['relay', '--http-port', '0', '--http-host', 'not a host'],
      {},
      /--http-host: must be an IP address or a host name \(set by --http-host or OUTBOXER_HTTP_HOST\)/,
    ],
    [
      ['relay', '--http-port', '0', '--admin-token', 'too-short'],
      {},
      /^outboxer: --admin-token: the admin token must be at least 16 characters long \(got 9\) \(set by --admin-token or OUTBOXER_ADMIN_TOKEN\)/,
    ],
    [
      ['relay', '--http-port', '0'],
      { OUTBOXER_ADMIN_TOKEN: 'has spaces in the token' },
      /OUTBOXER_ADMIN_TOKEN: the admin token must be visible ASCII characters, without spaces/,
    ],
    [['status', '--http-port', '9465'], {}, /--http-port does not apply to 'status'/],
    [['topics'], {}, /'topics' needs a subcommand: list, pause or resume/],
    [['topics', 'stop', 'orders'], {}, /unknown command 'topics stop'/],
    [['topics', 'pause'], {}, /'topics pause' needs a topic/],
    [['topics', 'resume', 'orders.created', 'payments'], {}, /unexpected argument 'payments' for 'topics resume'/],
    [['topics', 'list', 'orders.created'], {}, /unexpected argument 'orders.created' for 'topics list'/],
    [['topics', 'list', '--reason', 'why'], {}, /--reason does not apply to 'topics list'/],
    [['topics', 'resume', 'orders.created', '--reason', 'why'], {}, /--reason does not apply to 'topics resume'/],
    [['topics', 'pause', ''], {}, /^outboxer: OUTBOXER_INVALID_TOPIC: a paused topic must be a non-empty string/],
    [['topics', 'pause', 'orders.created', '--reason', 'a\tb'], {}, /^outboxer: OUTBOXER_INVALID_OPTION: the reason for pausing topic "orders.created"/],
    [['status', '--tracing'], {}, /--tracing does not apply to 'status'/],
    [['relay'], { OUTBOXER_TRACING: 'yes' }, /OUTBOXER_TRACING must be true or false; got "yes" \(set by --tracing or OUTBOXER_TRACING\)/],
  ] as const)('refuses %j (env %j) with exit 2 and the usage', async (args, env, message) => {
    expectUsageError(await runCli(args, cliEnv({ ...nowhere, ...env })), message);
  });

  it('an unknown option: one line that says which, the option likely meant and where the options are; exit 2', async () => {
    const env = cliEnv(nowhere);
    const [typo, unknown, main] = await Promise.all([
      runCli(['relay', '--lease-mss', '9000'], env),
      runCli(['status', '--bogus'], env),
      runCli(['--frobnicate'], env),
    ]);
    expect(typo).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "outboxer: unknown option '--lease-mss' for 'relay'; did you mean --lease-ms? (run 'outboxer help relay' for its options)\n",
    });
    expect(unknown).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "outboxer: unknown option '--bogus' for 'status' (run 'outboxer help status' for its options)\n",
    });
    expect(main).toMatchObject({ code: 2, stdout: '', stderr: "outboxer: unknown option '--frobnicate' (run 'outboxer help' for the commands)\n" });
  });

  it('any other usage error: the message first, then the usage line and where the options are, not the whole help', async () => {
    const result = await runCli(['relay', '--publisher', 'kafka'], cliEnv(nowhere));
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')).toEqual([
      'outboxer: --publisher must be one of console, rabbitmq, nats, redis, mqtt, webhook, pubsub, sqs, sns, amqp10; got "kafka" (set by --publisher or OUTBOXER_PUBLISHER)',
      'Usage: outboxer relay [--publisher console|rabbitmq|nats|redis|mqtt|webhook|pubsub|sqs|sns|amqp10] [options]',
      "Run 'outboxer help relay' for its options.",
      '',
    ]);
    // Without a command there is no message to lose: the commands are listed.
    const bare = await runCli([], cliEnv(nowhere));
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^outboxer: no command given\n\nUsage: outboxer <command> \[options\]\n\nCommands:/);
  });

  it('the help says what is true: migrate resizes, relays run engine v2 only, and the database URL of sql is optional', async () => {
    const env = cliEnv();
    const [migrate, sql, relay] = await Promise.all([runCli(['migrate', '--help'], env), runCli(['sql', '--help'], env), runCli(['relay', '--help'], env)]);
    expect(migrate.stdout).toMatch(/^Usage: outboxer migrate \[--partitions <n>\] \[--cancel-resize\]/);
    expect(migrate.stdout).not.toMatch(/--engine|v1/);
    expect(relay.stdout).toMatch(/--engine <engine>\s+OUTBOXER_ENGINE\s+v2, the only engine: relays lease partitions \(default v2\)/);
    for (const help of [migrate.stdout, sql.stdout, relay.stdout]) expect(help).not.toMatch(/\(required \(|\)\)/);
    expect(migrate.stdout).toMatch(/--database-url <url>\s+OUTBOXER_DATABASE_URL\s+the database: .* or sqlite:<file> \(required\)\n/);
    expect(sql.stdout).toMatch(
      /--database-url <url>\s+OUTBOXER_DATABASE_URL\s+whose DDL to print, by its scheme: .*; nothing connects \(optional: PostgreSQL's DDL without it\)\n/,
    );
  });
});
