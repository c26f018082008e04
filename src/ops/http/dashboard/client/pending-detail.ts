import type { PendingDetail, PendingDetailAnswer } from './api-types.js';
import { cell, cells, child, el, make, setText, show, showError } from './dom.js';
import { destinationName, plural } from './format.js';
import { pending, pendingUnsupported } from './pending-state.js';
import { reloadPending } from './refresh-hooks.js';
import { messageOf, request, statusOf } from './request.js';

/** One message's detail: where it stands, and its headers and body only if this server shows payloads. */
export function showPending(id: string): void {
  pending.shown = id;
  markShown();
  el('pending-detail-title').replaceChildren(make('span', '', 'Message '), make('code', '', id));
  showError('pending-detail-error', null);
  for (const part of ['pending-detail-facts', 'pending-detail-hidden', 'pending-detail-payload']) show(part, false);
  show('pending-detail', true);
  el('pending-detail').focus();
  void request<PendingDetailAnswer>('GET', `/api/pending/message?id=${encodeURIComponent(id)}`).then(
    (data) => {
      if (pending.shown === id) renderDetail(data.message);
    },
    (error: unknown) => {
      if (pending.shown !== id || pendingUnsupported(error)) return;
      if (statusOf(error) !== 404) {
        showError('pending-detail-error', { message: messageOf(error) });
        return;
      }
      showError('pending-detail-error', { message: `Message ${id} is no longer pending: it was published, parked dead or deleted.` });
      reloadPending();
    },
  );
}

function renderDetail(message: PendingDetail): void {
  setText('pending-detail-type', message.type);
  setText('pending-detail-destination', destinationName(message.destination));
  setText('pending-detail-content-type', message.contentType);
  setText('pending-detail-header-names', message.headerNames.length ? message.headerNames.join(', ') : 'none');
  setText('pending-detail-size', plural(message.bodyBytes, 'byte'));
  setText('pending-detail-created', new Date(message.createdAt).toLocaleString());
  setText('pending-detail-due', message.dueAt === null ? "due now, in its key's turn" : `scheduled until ${new Date(message.dueAt).toLocaleString()}`);
  show('pending-detail-facts', true);
  const shown = message.payload === 'shown';
  show('pending-detail-hidden', !shown);
  show('pending-detail-payload', shown);
  const headers = el('pending-detail-header-body', HTMLTableSectionElement);
  if (message.payload !== 'shown') {
    headers.replaceChildren();
    setText('pending-detail-body', '');
    return;
  }
  const { headers: values, body } = message;
  headers.replaceChildren(
    ...Object.keys(values)
      .sort()
      .map((name) => {
        const row = document.createElement('tr');
        cells(row, 2);
        cell(row, 0).textContent = name;
        cell(row, 1).textContent = values[name] ?? '';
        return row;
      }),
  );
  show('pending-detail-headers', headers.rows.length > 0);
  const binary = 'base64' in body;
  setText('pending-detail-body-label', binary ? 'Body (binary, base64)' : 'Body');
  setText('pending-detail-body', 'base64' in body ? body.base64 : body.text);
}

export function closeDetail(): void {
  const row = el('pending-body', HTMLTableSectionElement).querySelector('tr.shown');
  pending.shown = '';
  show('pending-detail', false);
  markShown();
  if (row instanceof HTMLTableRowElement) child(cell(row, 10), 0, HTMLButtonElement).focus();
}

/** Marks the row whose detail is open, and says so on its Details button. */
export function markShown(): void {
  for (const row of el('pending-body', HTMLTableSectionElement).rows) {
    const shown = row.dataset.key === pending.shown;
    row.classList.toggle('shown', shown);
    child(cell(row, 10), 0, HTMLButtonElement).setAttribute('aria-expanded', String(shown));
  }
}
