import type { DeadAnswer, DeadEntry } from './api-types.js';
import { button, mutate } from './controls.js';
import { state } from './dashboard-state.js';
import { cell, cells, el, make, setText, show, syncRows } from './dom.js';
import { destinationName, integer, plural, since } from './format.js';

/** The dead messages, each with Retry and Purge. */
export function renderDead(data: DeadAnswer): void {
  state.listedDead = data.dead.length;
  syncRows(
    el('dead-body', HTMLTableSectionElement),
    data.dead,
    (m) => m.id,
    deadRow,
    (row, message: DeadEntry) => {
      cell(row, 0).replaceChildren(make('span', 'type', message.type), make('code', 'id', message.id));
      cell(row, 1).textContent = message.topic;
      cell(row, 2).textContent = destinationName(message.destination);
      cell(row, 3).textContent = message.key ?? '–';
      cell(row, 4).textContent = integer.format(message.attempts);
      cell(row, 5).textContent = message.reason;
      cell(row, 6).replaceChildren(since(message.deadAt));
    },
  );
  show('dead-empty', data.dead.length === 0);
  deadNotListed();
}

function deadRow(): HTMLTableRowElement {
  const row = document.createElement('tr');
  cells(row, 8);
  cell(row, 4).className = 'num';
  cell(row, 5).className = 'reason';
  const id = (): string => row.dataset.key ?? '';
  const actions = cell(row, 7);
  actions.appendChild(
    button('Retry', '', (node) => {
      void mutate(node, '/api/dead/retry', { ids: [id()] }, (r) => (r.retried ? `Message ${id()} is pending again.` : `Message ${id()} was no longer dead.`));
    }),
  );
  actions.appendChild(
    button('Purge', 'danger', (node) => {
      if (!window.confirm(`Delete dead message ${id()} for good?`)) return;
      void mutate(node, '/api/dead/purge', { ids: [id()] }, (r) => (r.purged ? `Message ${id()} was purged.` : `Message ${id()} was no longer dead.`));
    }),
  );
  return row;
}

/** Says how many dead messages the list leaves out (the count is of the table, the list has at most 100). */
export function deadNotListed(): void {
  const hidden = state.deadTotal - state.listedDead;
  setText('dead-more', hidden > 0 ? `Showing the first ${integer.format(state.listedDead)}; ${plural(hidden, 'more dead message')} not listed.` : '');
  show('dead-more', hidden > 0);
}
