import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { closedPort } from '../support/rabbitmq-harness.js';
import { launchChromium } from './chromium.js';
import { SIZE_LIMIT_BYTES, startDashboardScenario, type DashboardScenario } from './dashboard-scenario.js';
import { watch } from './page-problems.js';

/** The number a card or cell shows ("1,234" in en-US), or undefined while it shows a dash. */
async function shown(page: Page, selector: string): Promise<number | undefined> {
  const text = (await page.locator(selector).textContent()) ?? '';
  const digits = text.replace(/[^0-9.]/g, '');
  return digits === '' ? undefined : Number(digits);
}

interface PaintReport {
  readonly paints: { name: string; ms: number }[];
  readonly firstDataMs: number;
  readonly assetBytes: number;
}

/** Run in the page: its paint entries, when the first numbers were drawn (the script's mark), and the bytes of its own files. */
const PAINT_REPORT = `({
  paints: performance.getEntriesByType('paint').map((entry) => ({ name: entry.name, ms: Math.round(entry.startTime) })),
  firstDataMs: Math.round(performance.getEntriesByName('outboxer:first-data')[0]?.startTime ?? -1),
  assetBytes: performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .filter((entry) => !entry.name.includes('/api/')).reduce((sum, entry) => sum + entry.encodedBodySize, 0),
})`;

/** Paint entries are queued after the frame is presented, which may come after the script's mark. */
const PAINTED = "performance.getEntriesByType('paint').some((entry) => entry.name === 'first-contentful-paint')";
/** Polled from here: the page's CSP refuses the string predicates of `waitForFunction`. */
const painted = (on: Page, andMark = 'true') => waitFor(() => on.evaluate<boolean>(`${PAINTED} && ${andMark}`), { what: 'the first contentful paint' });

describe('the dashboard in Chromium, against a relay publishing to RabbitMQ', () => {
  let scenario: DashboardScenario;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    scenario = await startDashboardScenario();
    browser = await launchChromium();
    page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 1000 } })).newPage();
    problems = watch(page);
  });

  afterAll(async () => {
    await browser?.close();
    await scenario?.close();
  });

  it('loads with no console error, and its numbers move while the relay publishes', async () => {
    const orders = scenario.topic('orders');
    await scenario.enqueue(orders, 120);
    const response = await page.goto(scenario.url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await waitFor(async () => (await shown(page, '#pending')) === 120, { what: 'the page to show 120 pending' });
    await expect.poll(() => page.locator('#topics-body tr td').first().textContent()).toBe(orders);

    await painted(page);
    const cold = await page.evaluate<PaintReport>(PAINT_REPORT);
    const again = await page.context().newPage();
    await again.goto(scenario.url);
    await painted(again, "performance.getEntriesByName('outboxer:first-data').length > 0");
    const warm = await again.evaluate<PaintReport>(PAINT_REPORT);
    await again.close();
    for (const report of [cold, warm]) expect(report.paints.map((entry) => entry.name)).toContain('first-contentful-paint');
    console.info(
      `dashboard first paint (headless Chromium, loopback; cold: first page of a new context, warm: a second page): ${JSON.stringify({ cold, warm })}`,
    );

    scenario.relay.start();
    await waitFor(async () => (await shown(page, '#pending')) === 0 && (await shown(page, '#published')) === 120, {
      what: 'pending 0 and 120 published on the page',
    });
    const rates: number[] = [];
    for (let wave = 1; wave <= 3; wave++) {
      await scenario.enqueue(orders, 50);
      await waitFor(
        async () => {
          const rate = await shown(page, '#rate');
          if (rate !== undefined) rates.push(rate);
          return (await shown(page, '#published')) === 120 + 50 * wave;
        },
        { what: `the page to count wave ${wave}` },
      );
    }
    expect(Math.max(...rates)).toBeGreaterThan(0);
    expect((await scenario.exchange.waitForDeliveries(270)).length).toBe(270);
    expect(await page.locator('#spark polyline').getAttribute('points')).toMatch(/\d+,\d/);

    await expect.poll(() => page.locator('#relays-body tr').count()).toBe(1);
    expect(await page.locator('#relays-body .self').textContent()).toBe('this process');
    expect(await page.locator('#partition-grid .cell').count()).toBe(64);
    await expect.poll(() => page.locator('#partition-grid .cell.unowned').count()).toBe(0);
    expect(await page.locator('#unowned-pill').isHidden()).toBe(true);
    expect(await page.locator('#relay-ready').textContent()).toBe('ready');
    expect(problems).toEqual([]);
  });

  it('lists a dead message with its reason; Retry, once the token is typed, brings it back and it is published', async () => {
    const [id] = await scenario.enqueue(scenario.topic('big'), 1, () => ({ blob: 'x'.repeat(SIZE_LIMIT_BYTES * 2) }));
    const row = page.locator(`#dead-body tr[data-key="${id}"]`);
    await row.waitFor();
    expect(await row.locator('.reason').textContent()).toContain(`over the maxMessageBytes option of ${SIZE_LIMIT_BYTES} bytes`);
    expect(await row.locator('td').nth(2).textContent()).toBe('default');
    await waitFor(async () => (await shown(page, '#dead')) === 1, { what: 'the dead card to show 1' });
    const retry = row.getByRole('button', { name: 'Retry' });
    expect(await retry.isDisabled()).toBe(true);
    expect(await retry.getAttribute('title')).toBe('Enter the admin token to make changes');

    scenario.publisher.limitRaised = true;
    await page.getByLabel('Admin token').fill(scenario.token);
    await retry.click();
    const delivered = await scenario.exchange.waitForDeliveries(271);
    expect(delivered.some((delivery) => delivery.properties.messageId === id)).toBe(true);
    await row.waitFor({ state: 'detached' });
    expect(await page.locator('#flash').textContent()).toBe(`Message ${id} is pending again.`);
    await waitFor(async () => (await shown(page, '#dead')) === 0, { what: 'the dead card to show 0' });
    expect(await scenario.fixture.store.listDead(10)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('purges a dead message only once the confirmation is accepted', async () => {
    scenario.publisher.limitRaised = false;
    await page.getByLabel('Admin token').fill(scenario.token);
    const [id] = await scenario.enqueue(scenario.topic('big'), 1, () => ({ blob: 'y'.repeat(SIZE_LIMIT_BYTES * 2) }));
    const row = page.locator(`#dead-body tr[data-key="${id}"]`);
    await row.waitFor();
    page.once('dialog', (dialog) => void dialog.dismiss());
    await row.getByRole('button', { name: 'Purge' }).click();
    expect((await scenario.fixture.store.listDead(10)).map((message) => message.id)).toEqual([id]);
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Purge' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await scenario.fixture.store.listDead(10)).toEqual([]);
    expect(scenario.exchange.deliveries.some((delivery) => delivery.properties.messageId === id)).toBe(false);
    expect(problems).toEqual([]);
  });

  it('pauses a topic from the form and resumes it with its button', async () => {
    const topic = scenario.topic('billing');
    await page.getByLabel('Admin token').fill(scenario.token);
    await page.getByLabel('Topic', { exact: true }).fill(topic);
    await page.getByLabel('Reason', { exact: true }).fill('billing service migration');
    await page.getByRole('button', { name: 'Pause topic' }).click();
    const row = page.locator(`#paused-body tr[data-key="${topic}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('operator');
    expect(await row.locator('td').nth(2).textContent()).toBe('billing service migration');
    expect((await scenario.fixture.store.pausedTopics()).map((pause) => pause.topic)).toEqual([topic]);
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await scenario.fixture.store.pausedTopics()).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('pauses a destination from its form', async () => {
    await page.getByLabel('Admin token').fill(scenario.token);
    await page.getByLabel('Destination', { exact: true }).fill('partner');
    await page.getByLabel('Reason for the destination').fill('partner maintenance');
    await page.getByRole('button', { name: 'Pause destination' }).click();
    const row = page.locator('#paused-destinations-body tr[data-key="partner"]');
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toBe('partner maintenance');
    expect((await scenario.fixture.store.pausedDestinations()).map((pause) => [pause.destination, pause.reason])).toEqual([['partner', 'partner maintenance']]);
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await scenario.fixture.store.pausedDestinations()).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('shows a destination an operator paused as a row of every topic to it, and resumes it with its button', async () => {
    await page.getByLabel('Admin token').fill(scenario.token);
    expect(await scenario.fixture.store.pauseDestination('partner', 'partner maintenance, INC-12')).toBe(true);
    const row = page.locator('#paused-destinations-body tr[data-key="partner"]');
    await row.waitFor();
    const cells = row.locator('td');
    expect(await cells.nth(0).locator('.name').textContent()).toBe('(all topics)');
    expect(await cells.nth(0).locator('.dest').textContent()).toBe('to partner');
    expect(await cells.nth(1).textContent()).toBe('operator');
    expect(await cells.nth(2).textContent()).toBe('partner maintenance, INC-12');
    expect(await page.locator('#paused-empty').isHidden()).toBe(true);
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await scenario.fixture.store.pausedDestinations()).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('shows a topic the relay paused by itself (no queue bound) as held by the relay, with its reason and since when, without Pause or Resume', async () => {
    const topic = scenario.exchange.unroutableTopic;
    await page.getByLabel('Admin token').fill(scenario.token);
    const ids = await scenario.enqueue(topic, 4);
    // the lag per topic is read every 10 s (cached 5 s by the server)
    const held = page.locator(`#held-body tr[data-key="${topic}"]`);
    await held.waitFor({ timeout: 30_000 });
    const cells = held.locator('td');
    expect(await cells.nth(0).locator('.name').textContent()).toBe(topic);
    expect(await cells.nth(0).locator('.dest').textContent()).toBe('to default');
    expect(await cells.nth(1).textContent()).toBe('relay');
    await expect
      .poll(() => cells.nth(2).textContent(), { timeout: 30_000 })
      .toMatch(/^Destination missing \(4 messages held\): OUTBOXER_UNROUTABLE: .*no queue is bound/);
    const since = await cells.nth(3).locator('time').getAttribute('datetime');
    expect(Date.now() - Date.parse(since ?? '')).toBeLessThan(120_000);
    expect(await cells.nth(4).textContent()).toBe('resumes by itself');
    expect(await held.getByRole('button').count()).toBe(0);
    expect(await page.locator('#paused-empty').isHidden()).toBe(true);

    const lag = page.locator(`#topics-body tr[data-key="${topic}"]`);
    expect(await lag.locator('td').nth(1).textContent()).toBe('default');
    expect(await lag.locator('.hold').textContent()).toMatch(/^Destination missing: held by the relay for \d/);
    expect(await lag.locator('.hold').getAttribute('title')).toMatch(/^OUTBOXER_UNROUTABLE: .*\(since /);
    expect(await lag.locator('.tag.bad').isVisible()).toBe(true);
    expect(await lag.getByRole('button', { name: 'Pause' }).isHidden()).toBe(true);
    expect(await lag.locator('.tag:not(.bad)').isHidden()).toBe(true);

    // The destination appears: the relay publishes the held messages by itself and the page stops showing the pause.
    const before = scenario.exchange.deliveries.length;
    await scenario.exchange.admin.channel.bindQueue(scenario.exchange.queue, scenario.exchange.exchange, topic);
    const delivered = await scenario.exchange.waitForDeliveries(before + 4, 20_000);
    expect(ids.every((id) => delivered.some((d) => d.properties.messageId === id))).toBe(true);
    await held.waitFor({ state: 'detached', timeout: 30_000 });
    expect(problems).toEqual([]);
  });

  it('shows a relay whose broker is unreachable in the relay group, with its reason and since when, and counts it', async () => {
    const unreachable = createRabbitMqPublisher({
      url: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
      exchange: scenario.exchange.exchange,
      connectTimeoutMs: 500,
    });
    const relay = scenario.addRelay('relay-without-broker', unreachable);
    try {
      const row = page.locator('#relays-body tr', { hasText: 'relay-without-broker' });
      await waitFor(async () => (await row.locator('td').nth(3).textContent())?.includes('broker trouble for'), { what: 'the relay shown in broker trouble' });
      expect(await row.locator('td').nth(3).textContent()).toMatch(/has not been reachable since the relay started/);
      expect(await row.locator('td').nth(3).getAttribute('class')).toBe('state-bad');
      expect(await row.locator('td time').getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(await row.locator('td').nth(1).textContent()).toBe('0');
      expect(await page.locator('#trouble-pill').textContent()).toBe('1 relay cannot reach its broker');
      expect(await page.locator('#trouble-pill').isVisible()).toBe(true);
    } finally {
      await relay.stop();
      await unreachable.close();
    }
    await waitFor(async () => !(await page.locator('#trouble-pill').isVisible()), { what: 'the pill gone once the relay left' });
    expect(problems).toEqual([]);
  });

  it('is read-only, and says why, on a server without an admin token', async () => {
    const readOnly = await page.context().newPage();
    const readOnlyProblems = watch(readOnly);
    await readOnly.goto(await scenario.readOnlyServer());
    await readOnly.locator('#notice').waitFor();
    expect(await readOnly.locator('#notice').textContent()).toContain('Changes are disabled');
    await readOnly.getByLabel('Admin token').fill('any-token-at-all-typed-here');
    expect(await readOnly.getByRole('button', { name: 'Retry all' }).isDisabled()).toBe(true);
    expect(await readOnly.getByRole('button', { name: 'Pause topic' }).isDisabled()).toBe(true);
    expect(await readOnly.getByRole('button', { name: 'Delete selected' }).isDisabled()).toBe(true);
    await readOnly.close();
    expect(readOnlyProblems).toEqual([]);
  });

  it('makes a screenshot (to a temporary directory: scripts/dashboard-screenshot.ts updates docs/dashboard.png)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'outboxer-dashboard-'));
    try {
      const file = join(directory, 'dashboard.png');
      await page.screenshot({ path: file, fullPage: true });
      const png = await readFile(file);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(10_000);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
