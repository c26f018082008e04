import type { InfoAnswer, ReadAnswers } from './api-types.js';
import { updateControls } from './controls.js';
import { POLL_MS, TOPICS_POLL_MS, state } from './dashboard-state.js';
import { renderDead } from './dead-view.js';
import { el, setText, showError } from './dom.js';
import { renderPaused, renderPausedDestinations } from './paused-view.js';
import { pendingAfterPoll } from './pending-list.js';
import { renderRelays } from './relays-view.js';
import { messageOf, request, statusOf } from './request.js';
import { renderStats } from './stats-view.js';
import { renderTopics } from './topics-view.js';

/** One part of the page a refresh reads: where its failure shows (if anywhere), how often, and its read (which returns its drawing). */
interface Section {
  readonly errorId: string;
  readonly every?: number;
  next?: number;
  readonly load: () => Promise<() => void>;
}

function section<P extends keyof ReadAnswers>(path: P, errorId: string, render: (data: ReadAnswers[P]) => void, every?: number): Section {
  const load = (): Promise<() => void> => request<ReadAnswers[P]>('GET', path).then((data) => () => render(data));
  return every === undefined ? { errorId, load } : { errorId, load, every };
}

/** What one refresh reads; each part is drawn as soon as its answer arrives. The lag per topic (a scan of every pending row, cached 5 s by the server) is read every 10 s only. */
const SECTIONS: readonly Section[] = [
  section('/api/stats', '', renderStats),
  section('/api/relays', 'relays-error', renderRelays),
  section('/api/topics?limit=50', 'topics-error', renderTopics, TOPICS_POLL_MS),
  section('/api/topics/paused', 'paused-error', renderPaused),
  section('/api/destinations/paused', 'paused-destinations-error', renderPausedDestinations),
  section('/api/dead?limit=100', 'dead-error', renderDead),
];

function connection(ok: boolean, text: string): void {
  const node = el('connection');
  node.classList.toggle('live', ok);
  node.classList.toggle('down', !ok);
  setText('connection-text', text);
}

async function loadInfo(): Promise<void> {
  try {
    const info = await request<InfoAnswer>('GET', '/api/info');
    state.info = info;
    state.readsNeedToken = !!info.readRequiresToken;
    setText('version', `outboxer ${info.version} · payloads ${info.payloads}`);
  } catch (error) {
    if (statusOf(error) === 401) state.readsNeedToken = true;
    throw error;
  }
}

async function readSection(part: Section): Promise<void> {
  try {
    const draw = await part.load();
    if (part.every) part.next = Date.now() + part.every;
    if (part.errorId) showError(part.errorId, null);
    draw();
  } catch (error) {
    if (part.errorId) showError(part.errorId, { message: messageOf(error) });
    throw error;
  }
}

/**
 * The refresh every 2 s (the lag per topic every 10 s; each part drawn as its answer arrives; the pending messages
 * only when asked). One at a time: a call meanwhile makes one more right after.
 */
export function poll(): void {
  clearTimeout(state.timer);
  if (state.polling) {
    state.again = true;
    return;
  }
  if (document.hidden) return;
  if (state.readsNeedToken && !state.token) {
    updateControls();
    connection(false, 'Waiting for the admin token');
    return;
  }
  state.polling = true;
  const ready = state.info ? Promise.resolve() : loadInfo();
  void ready
    .then(() => {
      const now = Date.now();
      const due = SECTIONS.filter((part) => !part.every || !part.next || now >= part.next);
      return Promise.allSettled(due.map(readSection));
    })
    .then(
      (results) => {
        const failure = results.find((r) => r.status === 'rejected');
        if (failure === undefined) connection(true, 'Live');
        else connection(false, messageOf(failure.reason));
        setText('updated', `updated ${new Date().toLocaleTimeString()}`);
      },
      (error: unknown) => {
        connection(false, statusOf(error) === 401 ? 'The admin token was refused' : `Cannot reach the server: ${messageOf(error)}`);
      },
    )
    .then(() => {
      state.polling = false;
      updateControls();
      pendingAfterPoll();
      state.timer = setTimeout(poll, state.again ? 0 : POLL_MS);
      state.again = false;
    });
}
