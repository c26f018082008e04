import type { RelayAnswer, StatsAnswer } from './api-types.js';
import { POLL_MS, SPARK_POINTS, state } from './dashboard-state.js';
import { deadNotListed } from './dead-view.js';
import { el, setText, show } from './dom.js';
import { age, decimal, integer } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

/** The counts, this process's relay, and the throughput since the last refresh (with its sparkline). */
export function renderStats(data: StatsAnswer): void {
  const stats = data.stats;
  setText('pending', integer.format(stats.pending));
  setText('scheduled', integer.format(stats.scheduled));
  setText('dead', integer.format(stats.dead));
  el('dead-card').classList.toggle('alarm', stats.dead > 0);
  state.deadTotal = stats.dead;
  deadNotListed();
  if (performance.getEntriesByName('outboxer:first-data').length === 0) performance.mark('outboxer:first-data');
  setText('oldest', age(stats.oldestPendingAgeSeconds));
  renderRelay(data.relay);
  if (!data.relay) {
    setText('rate', '–');
    setText('published', '–');
    return;
  }
  const at = Date.parse(data.at);
  const published = data.relay.counts.published;
  setText('published', integer.format(published));
  if (state.last && at > state.last.at && published >= state.last.published) {
    const rate = (published - state.last.published) / ((at - state.last.at) / 1000);
    state.rates.push(rate);
    if (state.rates.length > SPARK_POINTS) state.rates.shift();
    setText('rate', rate < 10 ? decimal.format(rate) : integer.format(rate));
    drawSpark();
  }
  state.last = { at, published };
}

function renderRelay(relay: RelayAnswer | null): void {
  show('relay-empty', !relay);
  show('relay-facts', !!relay);
  if (!relay) return;
  const reasons: string[] = [];
  if (!relay.running) reasons.push('not running');
  if (!relay.relayId) reasons.push('not joined');
  if (!relay.database.reachable) reasons.push('database unreachable');
  if (relay.broker === 'disconnected') reasons.push('broker disconnected');
  fact('relay-owner', relay.owner, '');
  fact('relay-ready', reasons.length === 0 ? 'ready' : `not ready: ${reasons.join(', ')}`, reasons.length === 0 ? 'ok' : 'bad');
  fact('relay-broker', relay.broker, relay.broker === 'connected' ? 'ok' : relay.broker === 'disconnected' ? 'bad' : 'warn');
  fact('relay-database', relay.database.reachable ? 'reachable' : 'unreachable', relay.database.reachable ? 'ok' : 'bad');
  fact('relay-partitions', `${relay.partitions.length}${relay.partitionCount ? ` of ${relay.partitionCount}` : ''}`, '');
  fact('relay-alive', relay.relaysAlive === undefined || relay.relaysAlive === null ? '–' : String(relay.relaysAlive), '');
  fact('relay-failures', `${integer.format(relay.counts.retried)} / ${integer.format(relay.counts.dead)}`, relay.counts.dead > 0 ? 'warn' : '');
}

function fact(id: string, text: string, tone: string): void {
  setText(id, text);
  el(id).className = tone ? `state-${tone}` : '';
}

function drawSpark(): void {
  const host = el('spark');
  let svg = host.firstElementChild;
  if (!svg) {
    svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${SPARK_POINTS - 1} 40`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('aria-hidden', 'true');
    const base = document.createElementNS(SVG, 'line');
    base.setAttribute('class', 'base');
    base.setAttribute('x1', '0');
    base.setAttribute('x2', String(SPARK_POINTS - 1));
    base.setAttribute('y1', '39.5');
    base.setAttribute('y2', '39.5');
    svg.appendChild(base);
    for (const name of ['area', 'line']) {
      const shape = document.createElementNS(SVG, name === 'area' ? 'polygon' : 'polyline');
      shape.setAttribute('class', name);
      svg.appendChild(shape);
    }
    host.appendChild(svg);
  }
  const max = Math.max(...state.rates, 1);
  const offset = SPARK_POINTS - state.rates.length;
  const points = state.rates.map((rate, i) => `${offset + i},${(38 - (rate / max) * 36).toFixed(2)}`);
  svg.lastElementChild?.setAttribute('points', points.join(' '));
  svg.children[1]?.setAttribute('points', `${offset},40 ${points.join(' ')} ${SPARK_POINTS - 1},40`);
  host.setAttribute('aria-label', `Throughput over the last ${(state.rates.length * POLL_MS) / 1000} seconds, peak ${decimal.format(max)} msg/s`);
}
