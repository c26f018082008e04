import type { KillPoint } from '../spec.js';
import type { Scenario } from '../scenario.js';

const POINTS: readonly KillPoint[] = ['after-claim', 'after-publish-before-confirm', 'after-confirm-before-mark'];

/**
 * Every relay incarnation kills itself with SIGKILL at a named point of the claim-publish-mark cycle,
 * chosen by the seed (slot i starts with point i), at a random occurrence; restarted after 0.5 s.
 */
export const rabbitKillPoints: Scenario = {
  name: 'rabbit-kill-points',
  description: 'SIGKILL at named points: after claim, after publish before the confirm, after the confirm before the mark',
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  killPlan(prng, slot, incarnation) {
    if (incarnation >= 4) return undefined;
    const point = incarnation === 0 ? POINTS[slot % POINTS.length] : prng.pick(POINTS);
    return { point: point as KillPoint, at: prng.int(2, 12) };
  },
  async faults() {
    // The faults are the relays' own kill points.
  },
};
