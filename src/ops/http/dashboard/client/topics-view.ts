import type { TopicsAnswer } from './api-types.js';
import { button } from './controls.js';
import { state } from './dashboard-state.js';
import { cell, cells, child, el, make, show, syncRows } from './dom.js';
import { age, destinationName, integer, lagKey } from './format.js';
import { markPaused, renderHeld } from './paused-view.js';
import { pendingTopicButton } from './pending-list.js';

/** The lag per topic and destination: its backlog, a Pause button, or why it is held. */
export function renderTopics(data: TopicsAnswer): void {
  state.held = new Map();
  for (const t of data.topics) if (t.relayPause) state.held.set(lagKey(t), t.relayPause);
  syncRows(
    el('topics-body', HTMLTableSectionElement),
    data.topics,
    lagKey,
    () => {
      const row = document.createElement('tr');
      cells(row, 5);
      cell(row, 0).append(pendingTopicButton(), make('span', 'hold'));
      cell(row, 2).className = 'num';
      cell(row, 3).className = 'num';
      const actions = cell(row, 4);
      actions.appendChild(make('span', 'tag', 'paused'));
      actions.appendChild(make('span', 'tag bad', 'destination missing'));
      actions.appendChild(
        button('Pause', '', () => {
          el('pause-topic', HTMLInputElement).value = row.dataset.topic ?? '';
          el('pause-reason', HTMLInputElement).focus();
        }),
      );
      return row;
    },
    (row, topic) => {
      row.dataset.topic = topic.topic;
      const name = child(cell(row, 0), 0, HTMLButtonElement);
      name.textContent = topic.topic;
      name.dataset.destination = destinationName(topic.destination);
      const hold = topic.relayPause;
      const holdNote = child(cell(row, 0), 1, HTMLElement);
      holdNote.textContent = hold ? `Destination missing: held by the relay for ${age((Date.now() - Date.parse(hold.since)) / 1000)}` : '';
      holdNote.title = hold ? `${hold.reason} (since ${new Date(hold.since).toLocaleString()})` : '';
      cell(row, 1).textContent = destinationName(topic.destination);
      cell(row, 2).textContent = integer.format(topic.pending);
      cell(row, 3).textContent = age(topic.oldestPendingAgeSeconds);
    },
  );
  markPaused();
  show('topics-empty', data.topics.length === 0);
  options(
    'topic-names',
    data.topics.map((t) => t.topic),
  );
  options('destination-names', ['default', ...data.topics.map((t) => destinationName(t.destination))]);
  renderHeld(data.topics.filter((t) => !!t.relayPause));
}

/** A datalist's options: these values, each once. */
function options(id: string, values: readonly string[]): void {
  el(id, HTMLDataListElement).replaceChildren(
    ...Array.from(new Set(values), (value) => {
      const option = make('option');
      option.value = value;
      return option;
    }),
  );
}
