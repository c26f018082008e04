/**
 * The observatory's script, the entry of the bundle the server sends as `/dashboard.js` (scripts/build-dashboard.ts):
 * it wires the page's own controls and starts the refresh. Every value is written with `textContent`, never as markup.
 */
import { mutate, updateControls } from './controls.js';
import { state } from './dashboard-state.js';
import { el } from './dom.js';
import { plural } from './format.js';
import { closeDetail } from './pending-detail.js';
import { deletePending } from './pending-delete.js';
import { loadPending, pickAll } from './pending-list.js';
import { pending } from './pending-state.js';
import { poll } from './poll.js';
import { wireRefresh } from './refresh-hooks.js';

wireRefresh({ poll, loadPending });

/** The button that sent a form, or its first one. */
function submitter(event: SubmitEvent, form: HTMLFormElement): HTMLButtonElement {
  const node = event.submitter ?? form.querySelector('button');
  if (!(node instanceof HTMLButtonElement)) throw new Error(`The form #${form.id} has no button`);
  return node;
}

function onSubmit(id: string, handle: (event: SubmitEvent, form: HTMLFormElement) => void): void {
  const form = el(id, HTMLFormElement);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    handle(event, form);
  });
}

onSubmit('pending-filter', () => loadPending(true));
el('pending-filter', HTMLFormElement).addEventListener('change', (event) => {
  if (event.target instanceof Element && event.target.matches('input')) loadPending(true);
});
el('pending-all', HTMLInputElement).addEventListener('change', (event) => {
  if (event.target instanceof HTMLInputElement) pickAll(event.target.checked);
});
el('pending-delete', HTMLButtonElement).addEventListener('click', (event) => {
  if (event.currentTarget instanceof HTMLButtonElement) deletePending(event.currentTarget, Array.from(pending.selected));
});
el('pending-detail-close', HTMLButtonElement).addEventListener('click', closeDetail);

el('token', HTMLInputElement).addEventListener('input', (event) => {
  if (event.target instanceof HTMLInputElement) state.token = event.target.value.trim();
  updateControls();
  if (state.readsNeedToken && state.token) poll();
});
onSubmit('token-form', () => poll());
onSubmit('pause-form', (event, form) => {
  const topic = el('pause-topic', HTMLInputElement).value.trim();
  const reason = el('pause-reason', HTMLInputElement).value.trim();
  void mutate(submitter(event, form), '/api/topics/pause', { topic, reason }, (r) => {
    el('pause-reason', HTMLInputElement).value = '';
    return r.paused ? `Paused ${topic}: every relay holds its messages until it is resumed.` : `${topic} was paused already.`;
  });
});
onSubmit('pause-destination-form', (event, form) => {
  const destination = el('pause-destination', HTMLInputElement).value.trim();
  const reason = el('pause-destination-reason', HTMLInputElement).value.trim();
  void mutate(submitter(event, form), '/api/destinations/pause', { destination, reason }, (r) => {
    el('pause-destination-reason', HTMLInputElement).value = '';
    return r.paused
      ? `Paused destination ${destination}: every relay holds its messages, every topic, until it is resumed.`
      : `${destination} was paused already.`;
  });
});
el('retry-all', HTMLButtonElement).addEventListener('click', (event) => {
  if (!(event.currentTarget instanceof HTMLButtonElement)) return;
  void mutate(event.currentTarget, '/api/dead/retry', { all: true }, (r) => `${plural(r.retried, 'dead message')} pending again.`);
});
el('purge-all', HTMLButtonElement).addEventListener('click', (event) => {
  if (!(event.currentTarget instanceof HTMLButtonElement)) return;
  if (!window.confirm('Delete every dead message for good? This cannot be undone.')) return;
  void mutate(event.currentTarget, '/api/dead/purge', { all: true }, (r) => `${plural(r.purged, 'dead message')} purged.`);
});
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) {
    poll();
    loadPending(false);
  }
});
updateControls();
poll();
