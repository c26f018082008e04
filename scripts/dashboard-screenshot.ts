/**
 * `npx tsx scripts/dashboard-screenshot.ts [out.png]`: regenerates docs/dashboard.png, the dashboard as an
 * operator sees it on a busy day: three relays sharing the partitions and a fourth whose broker is unreachable
 * (shown in trouble, holding nothing), a steady flow of messages, a topic paused by an operator with its backlog,
 * one the relays hold because no queue is bound for it, messages parked dead with their reason, and the pending
 * messages of the paused topic (picked from the lag table) with one opened. Needs the test suite's PostgreSQL and RabbitMQ
 * (test/support/services.ts) and /usr/bin/chromium; leaves nothing behind in them.
 */
import { launchChromium } from '../test/browser/chromium.js';
import { SIZE_LIMIT_BYTES, startDashboardScenario } from '../test/browser/dashboard-scenario.js';
import { createRabbitMqPublisher } from '../src/brokers/rabbitmq/index.js';
import { closedPort } from '../test/support/rabbitmq-harness.js';
import { waitFor } from '../test/support/wait-for.js';

const output = process.argv[2] ?? new URL('../docs/dashboard.png', import.meta.url).pathname;
const TRAFFIC_SECONDS = 62;

const scenario = await startDashboardScenario({ owner: 'relay-1 (orders-api-7f9c)' });
const browser = await launchChromium();
const unreachable = createRabbitMqPublisher({
  url: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
  exchange: scenario.exchange.exchange,
  connectTimeoutMs: 500,
});
let cutOff: { stop(): Promise<void> } | undefined;
// the flow goes on until the screenshot is taken, so that the page shows it moving
let flowing = true;
let traffic: Promise<void> = Promise.resolve();
try {
  // The scenario's exchange routes its own prefix only: route these topics, so that plain names read well;
  // shipping.* stays unbound, so the relays hold it as a topic whose destination is missing.
  for (const prefix of ['orders', 'users', 'inventory', 'billing']) {
    await scenario.exchange.admin.channel.bindQueue(scenario.exchange.queue, scenario.exchange.exchange, `${prefix}.#`);
  }
  // paused before any relay starts: every relay reads it before its first read, so none publishes an invoice
  await scenario.fixture.store.pauseTopic('billing.invoice', 'billing service migration, until 14:00');
  scenario.relay.start();
  scenario.addRelay('relay-2 (orders-api-51d2)');
  scenario.addRelay('relay-3 (orders-api-c07e)');
  cutOff = scenario.addRelay('relay-4 (orders-api-e5a8)', unreachable);

  const page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 1000 } })).newPage();
  await page.goto(scenario.url);
  await page.getByLabel('Admin token').fill(scenario.token);

  await scenario.enqueue('billing.invoice', 180, (i) => ({ invoice: i }), 'InvoiceIssued', { 'x-tenant': 'acme-eu' });
  await scenario.enqueue('users.signup', 3, (i) => ({ avatar: 'x'.repeat(SIZE_LIMIT_BYTES * (i + 2)) }), 'UserSignedUp');
  await scenario.enqueue('shipping.dispatched', 40, (i) => ({ parcel: i }), 'ParcelDispatched');
  traffic = (async () => {
    for (let tick = 0; flowing; tick++) {
      const wave = Math.round(60 + 45 * Math.sin(tick / 6) + 20 * Math.sin(tick / 2.3));
      await Promise.all([
        scenario.enqueue('orders.created', wave, (i) => ({ order: i }), 'OrderCreated'),
        scenario.enqueue('users.signup', Math.round(wave / 4), (i) => ({ user: i }), 'UserSignedUp'),
        scenario.enqueue('inventory.reserved', Math.round(wave / 2), (i) => ({ sku: i }), 'StockReserved'),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  await Promise.race([traffic, new Promise((resolve) => setTimeout(resolve, TRAFFIC_SECONDS * 1000))]);
  await waitFor(async () => (await page.locator('#dead-body tr').count()) === 3, { what: 'three dead messages on the page' });
  await waitFor(async () => (await page.locator('#relays-body tr').count()) === 4, { what: 'four relays on the page' });
  await waitFor(() => page.locator('#trouble-pill').isVisible(), { what: 'the relay in broker trouble counted' });
  // the operator picks the paused topic in the lag table, and opens its first held message
  await page.locator('#topics-body tr[data-key="billing.invoice"]').getByRole('button', { name: 'billing.invoice' }).click();
  await waitFor(async () => (await page.locator('#pending-body tr.scheduled').count()) === 100, { what: 'the held invoices listed' });
  await page.locator('#pending-body tr').first().getByRole('button', { name: 'Details' }).click();
  await page.locator('#pending-detail-facts').waitFor();
  await page.evaluate('window.scrollTo(0, 0)');
  await page.locator('#token').blur();
  await page.screenshot({ path: output, fullPage: true });
  flowing = false;
  await traffic;
  process.stdout.write(`${output}: written\n`);
} finally {
  flowing = false;
  await traffic.catch(() => undefined);
  await cutOff?.stop();
  await unreachable.close();
  await browser.close();
  await scenario.close();
}
