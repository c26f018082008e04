import { afterEach, describe, expect, it } from 'vitest';
import type { Relay } from '../../src/core/relay.js';
import type { BrokerRig } from '../support/broker-rigs.js';
import type { EndToEndEnvironment } from '../support/dialects/end-to-end-harness.js';
import { endToEndHarnesses } from '../support/dialects/index.js';
import { startWriters } from '../support/keyed-writers.js';
import { checkDeliveries } from '../support/order-checker.js';
import { childBrokerOf, relayChildren } from '../support/relay-child.js';
import { waitFor } from '../support/wait-for.js';
import { wireProbe, type WireProbe } from '../support/wire-probe.js';

for (const harness of endToEndHarnesses) {
  for (const { name, makeRig, probed } of harness.brokers)
    describe(`${harness.label} outbox -> ${name} end to end`, () => {
      let env: EndToEndEnvironment | undefined;
      let rig: BrokerRig | undefined;
      let probe: WireProbe | undefined;
      const children = relayChildren(harness.child);
      const relays: Relay[] = [];
      afterEach(async () => {
        await children.stopAll();
        await Promise.all(relays.splice(0).map((relay) => relay.stop()));
        await probe?.close();
        await rig?.cleanup();
        await env?.cleanup();
        [env, rig, probe] = [undefined, undefined, undefined];
      });

      async function setup() {
        env = await harness.setup();
        rig = await makeRig();
        return { env, rig };
      }

      it('one of two relay processes SIGKILLed mid-stream: the other takes its partitions after the lease; every commit delivered, no rollback, key order kept', async () => {
        const { env, rig } = await setup();
        const config = (name: string) => ({ ...env.childOutbox, broker: childBrokerOf(rig), name });
        const [victim, survivor] = [children.start(config('victim')), children.start(config('survivor'))];
        await Promise.all([victim.ready(), survivor.ready()]);
        await waitFor(
          async () => {
            const held = await env.holdings();
            return held.size === 2 && held.get(victim.relayId ?? '') === 32 && held.get(survivor.relayId ?? '') === 32;
          },
          { what: 'the two relays holding 32 partitions each' },
        );

        const load = startWriters(env.write, { writers: 4, topic: (w) => rig.topic(`w${w}`) });
        await waitFor(() => new Set(rig.deliveries).size >= 60, { what: 'messages flowing through both relays' });
        await victim.kill();
        const atKill = load.expected.length;
        await waitFor(
          async () => {
            const held = await env.holdings();
            return held.size === 1 && held.get(survivor.relayId ?? '') === 64;
          },
          { timeoutMs: 15_000, what: 'the survivor holding all 64 partitions once the lease ran out' },
        );
        await waitFor(() => load.expected.length >= atKill + 60, { what: 'writes going on after the takeover' });
        await load.stop();

        expect(load.failures).toEqual([]);
        expect(load.rolledBack.length).toBeGreaterThan(0);
        const committed = new Set(load.expected.map((m) => m.id));
        await waitFor(() => [...committed].every((id) => rig.deliveries.includes(id)), {
          timeoutMs: 20_000,
          what: `all ${committed.size} committed messages delivered`,
        });
        await waitFor(async () => (await env.left()) === 0, { what: 'every completion written' });
        const report = checkDeliveries(load.expected, rig.deliveries);
        expect(report.lost).toEqual([]);
        expect(report.phantom).toEqual([]);
        expect(report.orderInversions).toBe(0);
        const rolledBack = new Set(load.rolledBack);
        expect(rig.deliveries.filter((id) => rolledBack.has(id))).toEqual([]);
        expect(survivor.running).toBe(true);
      });

      if (probed)
        it('delivers a row inserted by plain SQL on the same wire as an enqueue of the same message', async () => {
          const { env, rig } = await setup();
          const topic = rig.topic('wire');
          probe = await wireProbe(rig, topic);
          const body = { orderId: 7, customer: 'Müller', total: '9.90' };
          const fromSql = await env.insertPlain({ topic, type: 'order.created', key: 'order-7', payload: body });
          const [enqueued] = await env.write([{ topic, type: 'order.created', key: 'order-7', payload: body }], false, 0);
          const relay = env.relay(rig.publisher());
          relays.push(relay);
          relay.start();

          const seen = probe.deliveries;
          await waitFor(() => seen.length >= 2, { what: 'both messages on the wire' });
          expect(seen.map((d) => d.message.id)).toEqual([fromSql, enqueued]); // one key: in seq order
          const [sqlRow, enqueue] = seen;
          expect(sqlRow?.wire).toEqual(enqueue?.wire);
          expect({ ...sqlRow?.message, id: '' }).toEqual({ ...enqueue?.message, id: '' });
          expect(sqlRow?.message).toMatchObject({ type: 'order.created', key: 'order-7', topic, contentType: 'application/json', headers: {}, payload: body });
          await waitFor(() => [fromSql, enqueued].every((id) => rig.deliveries.includes(id as string)), { what: "the rig's consumer getting both" });
        });
    });
}
