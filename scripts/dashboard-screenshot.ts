/**
 * `npx tsx scripts/dashboard-screenshot.ts [out.png]`: regenerates docs/dashboard.png, the dashboard as an
 * operator sees it on a busy day: three relays sharing the partitions, a steady flow of messages, a paused topic
 * with its backlog, and messages parked dead with their reason. Needs the test suite's PostgreSQL and RabbitMQ
 * (test/support/services.ts) and /usr/bin/chromium; leaves nothing behind in them.
 */
import { launchChromium } from '../test/browser/chromium.js';
import { SIZE_LIMIT_BYTES, startDashboardScenario } from '../test/browser/dashboard-scenario.js';
import { waitFor } from '../test/support/wait-for.js';

const output = process.argv[2] ?? new URL('../docs/dashboard.png', import.meta.url).pathname;
const TRAFFIC_SECONDS = 62;

const scenario = await startDashboardScenario({ owner: 'relay-1 (orders-api-7f9c)' });
const browser = await launchChromium();
try {
  // The scenario's exchange routes its own prefix only: route every topic, so that plain names read well.
  await scenario.exchange.admin.channel.bindQueue(scenario.exchange.queue, scenario.exchange.exchange, '#');
  scenario.relay.start();
  scenario.addRelay('relay-2 (orders-api-51d2)');
  scenario.addRelay('relay-3 (orders-api-c07e)');
  await scenario.fixture.store.pauseTopic('billing.invoice', 'billing service migration, until 14:00');

  const page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 1000 } })).newPage();
  await page.goto(scenario.url);
  await page.getByLabel('Admin token').fill(scenario.token);

  await scenario.enqueue('billing.invoice', 180, (i) => ({ invoice: i }), 'InvoiceIssued');
  await scenario.enqueue('users.signup', 3, (i) => ({ avatar: 'x'.repeat(SIZE_LIMIT_BYTES * (i + 2)) }), 'UserSignedUp');
  const started = Date.now();
  for (let tick = 0; Date.now() - started < TRAFFIC_SECONDS * 1000; tick++) {
    const wave = Math.round(60 + 45 * Math.sin(tick / 6) + 20 * Math.sin(tick / 2.3));
    await Promise.all([
      scenario.enqueue('orders.created', wave, (i) => ({ order: i }), 'OrderCreated'),
      scenario.enqueue('users.signup', Math.round(wave / 4), (i) => ({ user: i }), 'UserSignedUp'),
      scenario.enqueue('inventory.reserved', Math.round(wave / 2), (i) => ({ sku: i }), 'StockReserved'),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await waitFor(async () => (await page.locator('#dead-body tr').count()) === 3, { what: 'three dead messages on the page' });
  await waitFor(async () => (await page.locator('#relays-body tr').count()) === 3, { what: 'three relays on the page' });
  await page.locator('#token').blur();
  await page.screenshot({ path: output, fullPage: true });
  process.stdout.write(`${output}: written\n`);
} finally {
  await browser.close();
  await scenario.close();
}
