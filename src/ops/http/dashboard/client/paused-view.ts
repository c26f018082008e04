import type { LagEntry, PausedDestinationsAnswer, PausedTopicsAnswer } from './api-types.js';
import { button, mutate } from './controls.js';
import { state } from './dashboard-state.js';
import { cell, cells, child, el, make, show, syncRows } from './dom.js';
import { destinationName, lagKey, plural, since } from './format.js';

/** Topics an operator paused, each with a Resume button. */
export function renderPaused(data: PausedTopicsAnswer): void {
  syncRows(
    el('paused-body', HTMLTableSectionElement),
    data.paused,
    (p) => p.topic,
    () => {
      const row = document.createElement('tr');
      cells(row, 5);
      cell(row, 0).className = 'topic';
      cell(row, 1).textContent = 'operator';
      cell(row, 4).appendChild(
        button('Resume', '', (node) => {
          const topic = row.dataset.key ?? '';
          void mutate(node, '/api/topics/resume', { topic }, (r) => (r.resumed ? `Resumed ${topic}.` : `${topic} was not paused.`));
        }),
      );
      return row;
    },
    (row, pause) => {
      cell(row, 0).textContent = pause.topic;
      cell(row, 2).textContent = pause.reason;
      cell(row, 3).replaceChildren(since(pause.pausedAt));
    },
  );
  state.paused = new Set(data.paused.map((p) => p.topic));
  pausedEmpty();
  markPaused();
}

/** Destinations an operator paused as a whole: one row each, every topic of it ("(all topics)"), with a Resume button. */
export function renderPausedDestinations(data: PausedDestinationsAnswer): void {
  syncRows(
    el('paused-destinations-body', HTMLTableSectionElement),
    data.paused,
    (p) => p.destination,
    () => {
      const row = document.createElement('tr');
      cells(row, 5);
      cell(row, 0).className = 'topic';
      cell(row, 0).append(make('span', 'name', '(all topics)'), make('span', 'dest'));
      cell(row, 1).textContent = 'operator';
      cell(row, 4).appendChild(
        button('Resume', '', (node) => {
          const destination = row.dataset.key ?? '';
          void mutate(node, '/api/destinations/resume', { destination }, (r) =>
            r.resumed ? `Resumed destination ${destination}.` : `Destination ${destination} was not paused.`,
          );
        }),
      );
      return row;
    },
    (row, pause) => {
      child(cell(row, 0), 1, HTMLElement).textContent = `to ${pause.destination}`;
      cell(row, 2).textContent = pause.reason;
      cell(row, 3).replaceChildren(since(pause.pausedAt));
    },
  );
  state.pausedDestinations = data.paused.length;
  pausedEmpty();
}

/** Topics the relays hold by themselves (destination missing), per destination, from the lag read: no Resume, they resume when it exists. */
export function renderHeld(held: readonly LagEntry[]): void {
  syncRows(
    el('held-body', HTMLTableSectionElement),
    held,
    lagKey,
    () => {
      const row = document.createElement('tr');
      cells(row, 5);
      cell(row, 1).textContent = 'relay';
      cell(row, 0).className = 'topic';
      cell(row, 0).append(make('span', 'name'), make('span', 'dest'));
      cell(row, 2).className = 'reason';
      cell(row, 2).append(make('span', 'summary'), make('span', 'detail'));
      cell(row, 4).appendChild(make('span', 'muted', 'resumes by itself'));
      cell(row, 4).title = 'Each relay probes the destination with backoff and publishes the held messages once it exists: bind a queue or create the stream.';
      return row;
    },
    (row, topic) => {
      const hold = topic.relayPause;
      if (!hold) return;
      child(cell(row, 0), 0, HTMLElement).textContent = topic.topic;
      child(cell(row, 0), 1, HTMLElement).textContent = `to ${destinationName(topic.destination)}`;
      child(cell(row, 2), 0, HTMLElement).textContent = `Destination missing (${plural(hold.held, 'message')} held): `;
      child(cell(row, 2), 1, HTMLElement).textContent = hold.reason;
      cell(row, 3).replaceChildren(since(hold.since));
    },
  );
  state.heldCount = held.length;
  pausedEmpty();
}

function pausedEmpty(): void {
  show('paused-empty', state.paused.size === 0 && state.pausedDestinations === 0 && state.heldCount === 0);
}

/** The lag table shows a paused topic's state instead of its Pause button: paused by an operator (every destination), or held by the relay (one). */
export function markPaused(): void {
  for (const row of el('topics-body', HTMLTableSectionElement).rows) {
    const actions = cell(row, 4);
    const paused = state.paused.has(row.dataset.topic ?? '');
    const held = !paused && state.held.has(row.dataset.key ?? '');
    child(actions, 0, HTMLElement).hidden = !paused;
    child(actions, 1, HTMLElement).hidden = !held;
    child(actions, 2, HTMLElement).hidden = paused || held;
  }
}
