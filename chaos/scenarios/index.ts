import type { Scenario, ScenarioSet } from '../scenario.js';
import { fanOutDestinationOutageFull, fanOutDestinationOutageShort } from './fan-out-destination-outage.js';
import { natsLateTopology, rabbitLateTopology } from './late-topology.js';
import { natsRestart } from './nats-restart.js';
import { rabbitBrokerCutOneRelay } from './rabbit-broker-cut-one-relay.js';
import { rabbitBrokerLongOutage } from './rabbit-broker-long-outage.js';
import { rabbitBrokerNetwork } from './rabbit-broker-network.js';
import { rabbitDatabase, rabbitDatabaseFull } from './rabbit-database.js';
import { rabbitHandOver } from './rabbit-hand-over.js';
import { rabbitKillPoints } from './rabbit-kill-points.js';
import { rabbitRelayDatabaseCutoff } from './rabbit-relay-db-cutoff.js';
import { rabbitRelaysJoinLeave } from './rabbit-relays-join-leave.js';
import { rabbitSigkillRandom } from './rabbit-sigkill-random.js';
import { rabbitStopApp } from './rabbit-stop-app.js';
import { rabbitZombiePause } from './rabbit-zombie-pause.js';
import { rabbitZombieSigterm } from './rabbit-zombie-sigterm.js';

/** Every scenario, in the order the sets run them. */
export const scenarios: readonly Scenario[] = [
  rabbitSigkillRandom,
  rabbitKillPoints,
  rabbitZombieSigterm,
  rabbitBrokerNetwork,
  rabbitDatabase,
  natsRestart,
  rabbitHandOver,
  rabbitBrokerCutOneRelay,
  fanOutDestinationOutageShort,
  rabbitDatabaseFull,
  rabbitRelaysJoinLeave,
  rabbitZombiePause,
  rabbitRelayDatabaseCutoff,
  rabbitBrokerLongOutage,
  rabbitLateTopology,
  natsLateTopology,
  fanOutDestinationOutageFull,
  rabbitStopApp,
];

export function scenariosFor(set: ScenarioSet, name: string): Scenario[] {
  if (name !== 'all') {
    const found = scenarios.find((s) => s.name === name);
    if (found === undefined) throw new Error(`no scenario named ${name}; known: ${scenarios.map((s) => s.name).join(', ')}`);
    return [found];
  }
  return scenarios.filter((s) => s.sets.includes(set));
}
