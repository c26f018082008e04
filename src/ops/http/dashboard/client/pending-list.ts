import type { PendingAnswer, PendingEntry } from './api-types.js';
import { allowMutation, button, canMutate, control } from './controls.js';
import { state } from './dashboard-state.js';
import { cell, cells, child, el, make, setText, show, showError, syncRows } from './dom.js';
import { age, destinationName, integer, plural } from './format.js';
import { deletePending } from './pending-delete.js';
import { markShown, showPending } from './pending-detail.js';
import { pending, pendingUnsupported } from './pending-state.js';
import { request } from './request.js';

const PENDING_LIMIT = 100;
const PENDING_AUTO_MS = 10000;

/** The list's request for the filters as they are now, and whether any is set. */
function pendingQuery(): { path: string; filtered: boolean } {
  const parts = [`limit=${PENDING_LIMIT}`];
  const topic = el('pending-topic', HTMLInputElement).value.trim();
  const key = el('pending-key', HTMLInputElement).value;
  const destination = el('pending-destination', HTMLInputElement).value.trim();
  const older = el('pending-older', HTMLInputElement).value.trim();
  if (topic) parts.push(`topic=${encodeURIComponent(topic)}`);
  if (key) parts.push(`key=${encodeURIComponent(key)}`);
  if (destination) parts.push(`destination=${encodeURIComponent(destination)}`);
  if (older && Number(older) > 0) parts.push(`olderThanSeconds=${encodeURIComponent(older)}`);
  return { path: `/api/pending?${parts.join('&')}`, filtered: parts.length > 1 };
}

/**
 * Reads the list: at once when asked; by itself (asked false) only if it was not read in the last 10 s. One read
 * at a time: an ask meanwhile for other filters makes one more read after it (the same filters: the answer coming is fresh).
 */
export function loadPending(asked: boolean): void {
  if (pending.unsupported || !state.info || (state.readsNeedToken && !state.token)) return;
  if (!asked && Date.now() - pending.tried < PENDING_AUTO_MS) return;
  const form = el('pending-filter', HTMLFormElement);
  if (!form.checkValidity()) {
    if (asked) form.reportValidity();
    return;
  }
  const query = pendingQuery();
  if (pending.loading) {
    if (query.path !== pending.path) pending.again = true;
    return;
  }
  pending.path = query.path;
  pending.loading = true;
  pending.tried = Date.now();
  el('pending-panel').setAttribute('aria-busy', 'true');
  void request<PendingAnswer>('GET', query.path)
    .then(
      (data) => {
        showError('pending-error', null);
        renderPending(data.pending, query.filtered);
      },
      (error: unknown) => {
        if (!pendingUnsupported(error)) showError('pending-error', error instanceof Error ? error : { message: String(error) });
      },
    )
    .then(() => {
      pending.loading = false;
      el('pending-panel').removeAttribute('aria-busy');
      if (pending.again) {
        pending.again = false;
        loadPending(true);
      }
    });
}

/** After each 2 s refresh: the first list once the page can read, and the ages and due times moved on. */
export function pendingAfterPoll(): void {
  if (!state.info) return;
  setText(
    'pending-payloads',
    state.info.payloads === 'shown'
      ? "This server shows payloads: a message's detail reads its headers and body (audited)."
      : "This server hides payloads (started without exposePayloads): a message's detail shows header names and body size only.",
  );
  if (!pending.listedAt) loadPending(false);
  else tickPending();
}

function renderPending(list: readonly PendingEntry[], filtered: boolean): void {
  pending.listedAt = Date.now();
  pending.messages = new Map(list.map((m) => [m.id, m]));
  pending.selected.forEach((id) => {
    if (!pending.messages.has(id)) pending.selected.delete(id);
  });
  syncRows(
    el('pending-body', HTMLTableSectionElement),
    list,
    (m) => m.id,
    pendingRow,
    (row, message) => {
      const pick = child(cell(row, 0), 0, HTMLInputElement);
      pick.checked = pending.selected.has(message.id);
      pick.setAttribute('aria-label', `Select message ${message.id}`);
      child(cell(row, 1), 0, HTMLElement).textContent = message.type;
      const id = child(cell(row, 1), 1, HTMLElement);
      id.textContent = `…${message.id.slice(-8)}`;
      id.title = message.id;
      cell(row, 2).textContent = message.seq;
      cell(row, 3).textContent = message.topic;
      cell(row, 4).textContent = destinationName(message.destination);
      cell(row, 5).textContent = message.key ?? '–';
      cell(row, 6).textContent = integer.format(message.attempts);
      cell(row, 8).title =
        message.dueAt === null ? "due: published in its key's turn" : `scheduled until ${new Date(message.dueAt).toLocaleString()} (database clock)`;
      cell(row, 9).textContent = message.lastError ?? '';
      cell(row, 9).classList.toggle('failed', message.attempts > 0);
      row.classList.toggle('scheduled', message.dueAt !== null);
    },
  );
  tickPending();
  markShown();
  pendingPicked();
  setText('pending-empty', filtered ? 'No pending message matches these filters.' : 'No pending message: everything committed was published or parked dead.');
  show('pending-empty', list.length === 0);
  setText('pending-more', `Showing the first ${integer.format(PENDING_LIMIT)} in store order: there may be more. Narrow the filters to see others.`);
  show('pending-more', list.length >= PENDING_LIMIT);
  setText('pending-read', `Listed at ${new Date(pending.listedAt).toLocaleTimeString()} (not refreshed every 2 s: Refresh reads it again).`);
}

function pendingRow(): HTMLTableRowElement {
  const row = document.createElement('tr');
  cells(row, 11);
  const pick = make('input');
  pick.type = 'checkbox';
  pick.addEventListener('change', () => {
    const key = row.dataset.key ?? '';
    if (pick.checked) pending.selected.add(key);
    else pending.selected.delete(key);
    pendingPicked();
  });
  cell(row, 0).className = 'pick';
  cell(row, 0).appendChild(pick);
  cell(row, 1).append(make('span', 'type'), make('code', 'id'));
  cell(row, 2).className = 'num';
  cell(row, 6).className = 'num';
  cell(row, 8).className = 'due';
  cell(row, 9).className = 'reason';
  const details = control('Details', '', () => showPending(row.dataset.key ?? ''));
  details.setAttribute('aria-controls', 'pending-detail');
  cell(row, 10).append(
    details,
    button('Delete', 'danger', (node) => deletePending(node, [row.dataset.key ?? ''])),
  );
  return row;
}

/** Ages and due times as they are now: the database's at the read, plus the time since (this page's clock only measures the interval). */
function tickPending(): void {
  const elapsed = (Date.now() - pending.listedAt) / 1000;
  for (const row of el('pending-body', HTMLTableSectionElement).rows) {
    const message = pending.messages.get(row.dataset.key ?? '');
    if (!message) continue;
    let text = age(message.ageSeconds + elapsed);
    if (cell(row, 7).textContent !== text) cell(row, 7).textContent = text;
    text = dueText(message, elapsed);
    if (cell(row, 8).textContent !== text) cell(row, 8).textContent = text;
  }
}

function dueText(message: PendingEntry, elapsed: number): string {
  if (message.dueAt === null) return '–';
  const left = (Date.parse(message.dueAt) - Date.parse(message.createdAt)) / 1000 - message.ageSeconds - elapsed;
  return left < 0.5 ? 'now' : `in ${age(left)}`;
}

/** The selection: the header box, the count, and Delete selected (idle while none is picked). */
export function pendingPicked(): void {
  const count = pending.selected.size;
  const listed = el('pending-body', HTMLTableSectionElement).rows.length;
  const all = el('pending-all', HTMLInputElement);
  all.checked = count > 0 && count === listed;
  all.indeterminate = count > 0 && count < listed;
  setText('pending-picked', `${plural(count, 'message')} selected`);
  show('pending-picked', count > 0);
  const remove = el('pending-delete', HTMLButtonElement);
  remove.dataset.idle = count > 0 ? '' : 'Select the messages to delete first';
  allowMutation(remove, canMutate());
}

export function pickAll(checked: boolean): void {
  for (const row of el('pending-body', HTMLTableSectionElement).rows) {
    child(cell(row, 0), 0, HTMLInputElement).checked = checked;
    const key = row.dataset.key ?? '';
    if (checked) pending.selected.add(key);
    else pending.selected.delete(key);
  }
  pendingPicked();
}

/** A topic of the lag table as a button: lists that topic's pending messages of that destination. */
export function pendingTopicButton(): HTMLButtonElement {
  const node = make('button', 'name link');
  node.type = 'button';
  node.title = 'List its pending messages';
  node.addEventListener('click', () => {
    el('pending-topic', HTMLInputElement).value = node.textContent;
    el('pending-destination', HTMLInputElement).value = node.dataset.destination || '';
    loadPending(true);
    el('pending-panel').scrollIntoView({ block: 'start' });
    el('pending-topic', HTMLInputElement).focus({ preventScroll: true });
  });
  return node;
}
