/** Where the local services are; each can be overridden for a machine that runs them elsewhere. */
export const services = Object.freeze({
  postgresUrl: process.env.OUTBOXER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  amqpUrl: process.env.OUTBOXER_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  natsUrl: process.env.OUTBOXER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  mysqlUrl: process.env.OUTBOXER_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
});

/** A name unique to this test run, usable as a schema, exchange, queue or stream name. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
