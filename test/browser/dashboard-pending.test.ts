import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { waitFor } from '../support/wait-for.js';
import { launchChromium } from './chromium.js';
import { startDashboardScenario, type DashboardScenario } from './dashboard-scenario.js';
import { watch } from './page-problems.js';

describe("the dashboard's pending messages in Chromium, against a relay publishing to RabbitMQ", () => {
  let scenario: DashboardScenario;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    scenario = await startDashboardScenario();
    scenario.relay.start();
    browser = await launchChromium();
    page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1440, height: 1000 } })).newPage();
    problems = watch(page);
  });

  afterAll(async () => {
    await browser?.close();
    await scenario?.close();
  });

  let held: string;
  let frozen: string;
  let heldIds: readonly [string, string, string];
  let frozenIds: readonly string[];
  const pendingKeys = (on: Page) => on.locator('#pending-body tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
  const storedPending = async () => (await scenario.fixture.store.listPending({ limit: 100 })).map((message) => message.id);

  it('lists the pending messages of topics an operator paused and where each stands; a topic of the lag table and the filters narrow it; a detail hides the payload', async () => {
    held = scenario.topic('held');
    frozen = scenario.topic('frozen');
    await scenario.fixture.store.pauseTopic(held, 'held for an inspection');
    await scenario.fixture.store.pauseTopic(frozen, 'frozen as well');
    await waitFor(() => [held, frozen].every((topic) => scenario.relay.health().pausedTopics.includes(topic)), { what: 'the relay to read the pauses' });
    const [first, second, third] = await scenario.enqueue(held, 3, (i) => ({ order: i, note: '<img src=x>' }), 'order.held', { tenant: 'acme' });
    heldIds = [first!, second!, third!];
    frozenIds = await scenario.enqueue(frozen, 2);
    // the running relay holds them: scheduled, with the pause as their last error
    await waitFor(async () => (await scenario.fixture.store.listPending({ limit: 10 })).filter((m) => m.dueAt !== null).length === 5, {
      what: 'the relay to hold the five messages',
    });
    await page.goto(scenario.url);
    await expect.poll(() => pendingKeys(page)).toEqual([...heldIds, ...frozenIds]);
    expect(await page.locator('#pending-payloads').textContent()).toContain('This server hides payloads');

    const lag = page.locator(`#topics-body tr[data-key="${held}"]`);
    await lag.getByRole('button', { name: held }).click();
    expect(await page.getByLabel('Topic filter').inputValue()).toBe(held);
    expect(await page.getByLabel('Destination filter').inputValue()).toBe('default');
    await expect.poll(() => pendingKeys(page)).toEqual(heldIds);
    const stored = (await scenario.fixture.store.listPending({ limit: 1, topic: held }))[0]!;
    const row = page.locator('#pending-body tr').first();
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(1, 7)).toEqual([`order.held…${heldIds[0].slice(-8)}`, stored.seq, held, 'default', `${held}#0`, String(stored.attempts)]);
    expect(cells[7]).toMatch(/^\d+ s$/);
    expect(cells[8]).toMatch(/^(in \d.*|now)$/);
    expect([cells[9], stored.lastError]).toEqual([stored.lastError, expect.stringContaining('held for an inspection')]);
    expect(await row.getAttribute('class')).toContain('scheduled');
    expect(await row.locator('.id').getAttribute('title')).toBe(heldIds[0]);
    expect(await page.locator('#pending-more').isHidden()).toBe(true);

    await page.getByLabel('Key filter').fill(`${held}#1`);
    await page.getByLabel('Key filter').press('Enter');
    await expect.poll(() => pendingKeys(page)).toEqual([heldIds[1]]);
    await page.getByLabel('Older than (seconds)').fill('9999999');
    await page.getByLabel('Older than (seconds)').press('Enter');
    await expect.poll(() => pendingKeys(page)).toEqual([]);
    expect(await page.locator('#pending-empty').textContent()).toBe('No pending message matches these filters.');
    await page.getByLabel('Key filter').fill('');
    await page.getByLabel('Older than (seconds)').fill('');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => pendingKeys(page)).toEqual(heldIds);

    await row.getByRole('button', { name: 'Details' }).click();
    const inspected = await scenario.fixture.store.inspectPending(heldIds[0]);
    await expect.poll(() => page.locator('#pending-detail-content-type').textContent()).toBe('application/json');
    expect(await page.locator('#pending-detail-title').textContent()).toBe(`Message ${heldIds[0]}`);
    expect(await page.locator('#pending-detail-header-names').textContent()).toBe('tenant');
    expect(await page.locator('#pending-detail-destination').textContent()).toBe('default');
    expect(await page.locator('#pending-detail-size').textContent()).toBe(`${inspected?.bodyBytes} bytes`);
    expect(await page.locator('#pending-detail-hidden').textContent()).toBe('Payload hidden (server started without exposePayloads).');
    expect(await page.locator('#pending-detail-hidden').isVisible()).toBe(true);
    expect(await page.locator('#pending-detail-payload').isHidden()).toBe(true);
    expect(await page.locator('#pending-detail-body').textContent()).toBe('');
    expect(await row.getByRole('button', { name: 'Details' }).getAttribute('aria-expanded')).toBe('true');

    // each list is a query of the table: the 2 s refresh reads the counts, never the list
    const reads: string[] = [];
    const count = (request: { url(): string }) => reads.push(new URL(request.url()).pathname);
    page.on('request', count);
    await page.waitForTimeout(4500);
    page.off('request', count);
    expect(reads.filter((path) => path === '/api/stats').length).toBeGreaterThanOrEqual(2);
    expect(reads.filter((path) => path.startsWith('/api/pending'))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("shows a pending message's headers and body, as text, on a server started with exposePayloads; says when one is no longer pending", async () => {
    const other = await page.context().newPage();
    const otherProblems = watch(other);
    await other.goto(await scenario.server({ exposePayloads: true }));
    const row = other.locator(`#pending-body tr[data-key="${heldIds[0]}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.getByRole('button', { name: 'Details' }).click();
    const body = String((await scenario.fixture.store.inspectPending(heldIds[0], { body: true }))?.content?.body);
    expect(body).toContain('<img src=x>');
    await expect.poll(() => other.locator('#pending-detail-body').textContent()).toBe(body);
    expect(await other.locator('#pending-detail img').count()).toBe(0);
    expect(await other.locator('#pending-detail-header-body tr').allTextContents()).toEqual(['tenantacme']);
    expect(await other.locator('#pending-detail-body-label').textContent()).toBe('Body');
    expect(await other.locator('#pending-detail-hidden').isHidden()).toBe(true);
    expect(await other.locator('#pending-payloads').textContent()).toContain('This server shows payloads');

    // deleted since the list was read: the detail says so and the list is read again
    expect(await scenario.fixture.store.deletePending([heldIds[2]])).toBe(1);
    const gone = other.locator(`#pending-body tr[data-key="${heldIds[2]}"]`);
    await gone.getByRole('button', { name: 'Details' }).click();
    await expect
      .poll(() => other.locator('#pending-detail-error').textContent())
      .toBe(`Message ${heldIds[2]} is no longer pending: it was published, parked dead or deleted.`);
    await gone.waitFor({ state: 'detached' });
    await other.close();
    // the browser logs the expected 404 itself; nothing else
    expect(otherProblems).toEqual(['console error: Failed to load resource: the server responded with a status of 404 (Not Found)']);
  });

  it('deletes pending messages with the admin token only, after the confirmation; they are never published, the others are once resumed', async () => {
    await page.goto(scenario.url);
    const row = page.locator(`#pending-body tr[data-key="${heldIds[0]}"]`);
    const remove = row.getByRole('button', { name: 'Delete' });
    const selected = page.getByRole('button', { name: 'Delete selected' });
    await row.waitFor();
    expect([await remove.isDisabled(), await selected.isDisabled()]).toEqual([true, true]);
    expect(await remove.getAttribute('title')).toBe('Enter the admin token to make changes');
    await page.getByLabel('Admin token').fill(scenario.token);
    expect([await remove.isDisabled(), await selected.isDisabled()]).toEqual([false, true]);
    expect(await selected.getAttribute('title')).toBe('Select the messages to delete first');

    page.once('dialog', (dialog) => void dialog.dismiss());
    await remove.click();
    expect(await storedPending()).toContain(heldIds[0]);
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await remove.click();
    await row.waitFor({ state: 'detached' });
    expect(await page.locator('#flash').textContent()).toBe('Deleted 1 of 1 pending message.');
    for (const id of frozenIds) await page.getByRole('checkbox', { name: `Select message ${id}` }).check();
    expect(await page.locator('#pending-picked').textContent()).toBe('2 messages selected');
    await selected.click();
    await expect.poll(() => pendingKeys(page)).toEqual([heldIds[1]]);
    page.removeAllListeners('dialog');
    expect(asked).toEqual([
      'Delete 1 pending message? It will not be published, unless a relay is publishing it right now (then it goes out once). Later messages of the same key will go on.',
      'Delete 2 pending messages? They will not be published, unless a relay is publishing one right now (then it goes out once). Later messages of the same key will go on.',
    ]);
    expect(await page.locator('#flash').textContent()).toBe('Deleted 2 of 2 pending messages.');
    expect(await selected.isDisabled()).toBe(true);
    expect(await storedPending()).toEqual([heldIds[1]]);

    for (const topic of [held, frozen]) await scenario.fixture.store.resumeTopic(topic);
    await waitFor(() => scenario.exchange.deliveries.some((d) => d.properties.messageId === heldIds[1]), {
      what: 'the message left to be published',
      timeoutMs: 30_000,
    });
    const deleted = [heldIds[0], heldIds[2], ...frozenIds];
    expect(scenario.exchange.deliveries.filter((d) => deleted.includes(String(d.properties.messageId)))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('hides the pending messages on a server whose store cannot list them (501)', async () => {
    const store = scenario.fixture.store;
    const lacking = new Set<PropertyKey>(['listPending', 'inspectPending', 'deletePending']);
    const operator = new Proxy(store, {
      get: (target, name) => {
        const value: unknown = lacking.has(name) ? undefined : Reflect.get(target, name, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const other = await page.context().newPage();
    const otherProblems = watch(other);
    await other.goto(await scenario.server({ operator }));
    await other.locator('#pending-panel').waitFor({ state: 'hidden' });
    expect(await other.locator('#pending-panel').count()).toBe(1);
    await other.close();
    expect(otherProblems).toEqual(['console error: Failed to load resource: the server responded with a status of 501 (Not Implemented)']);
  });
  it("shows each message's destination: the lag per topic and destination, a destination this relay lacks held by it, and a destination filter", async () => {
    const topic = scenario.topic('fanned');
    const db = fromPgPool(scenario.fixture.pool);
    const { outbox } = scenario;
    // one row for the relay's own publisher (published), one for `partner`, which this relay does not have (held by it)
    const [own, partner] = (await outbox.transaction(db, (tx) =>
      outbox.enqueueMany(tx, [
        { topic, type: 'order.fanned', key: 'f1', payload: { n: 1 } },
        { topic, type: 'order.fanned', key: 'f1', payload: { n: 1 }, destination: 'partner' },
      ]),
    )) as [string, string];
    await waitFor(() => scenario.exchange.deliveries.some((d) => d.properties.messageId === own), {
      what: "the default destination's row published",
      timeoutMs: 30_000,
    });
    await page.goto(scenario.url);

    const lag = page.locator(`#topics-body tr[data-key="${topic} partner"]`);
    await lag.waitFor({ timeout: 30_000 });
    expect(await lag.locator('td').nth(1).textContent()).toBe('partner');
    await expect.poll(() => lag.locator('.hold').textContent(), { timeout: 30_000 }).toMatch(/^Destination missing: held by the relay for \d/);
    const held = page.locator(`#held-body tr[data-key="${topic} partner"]`);
    expect(await held.locator('.name').textContent()).toBe(topic);
    expect(await held.locator('.dest').textContent()).toBe('to partner');
    expect(await held.locator('.summary').textContent()).toBe('Destination missing (1 message held): ');
    expect(await held.locator('.detail').textContent()).toMatch(/OUTBOXER_UNKNOWN_DESTINATION: no destination partner on this relay/);

    await lag.getByRole('button', { name: topic }).click();
    expect(await page.getByLabel('Destination filter').inputValue()).toBe('partner');
    await expect.poll(() => pendingKeys(page)).toEqual([partner]);
    expect(await page.locator(`#pending-body tr[data-key="${partner}"] td`).nth(4).textContent()).toBe('partner');
    await page.getByLabel('Destination filter').fill('default');
    await page.getByLabel('Destination filter').press('Enter');
    await expect.poll(() => pendingKeys(page)).toEqual([]);
    // not a destination's name: the form refuses it and nothing is read
    const reads: string[] = [];
    const count = (request: { url(): string }) => reads.push(request.url());
    page.on('request', count);
    await page.getByLabel('Destination filter').fill('no such');
    await page.getByLabel('Destination filter').press('Enter');
    expect(
      await page
        .getByLabel('Destination filter')
        .evaluate((input) => (input as unknown as { validity: { patternMismatch: boolean } }).validity.patternMismatch),
    ).toBe(true);
    await page.waitForTimeout(500);
    page.off('request', count);
    expect(reads.filter((url) => url.includes('destination=no'))).toEqual([]);

    await scenario.fixture.pool.query(
      `UPDATE "${scenario.fixture.schema}".outbox SET state = 'dead', dead_at = now(), due_at = NULL, last_error = 'OUTBOXER_PUBLISH_FAILED: refused' WHERE id = $1`,
      [partner],
    );
    const dead = page.locator(`#dead-body tr[data-key="${partner}"]`);
    await dead.waitFor();
    expect(await dead.locator('td').nth(2).textContent()).toBe('partner');
    await scenario.fixture.store.purgeDead([partner], { destination: 'partner' });
    await dead.waitFor({ state: 'detached' });
    expect(problems).toEqual([]);
  });
});
