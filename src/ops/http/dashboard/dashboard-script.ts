import { DASHBOARD_SCRIPT_BASICS } from './dashboard-script-basics.js';
import { DASHBOARD_SCRIPT_PENDING } from './dashboard-script-pending.js';
import { DASHBOARD_SCRIPT_VIEWS } from './dashboard-script-views.js';

/** The last part: the refresh every 2 s (the lag per topic every 10 s; each part drawn as its answer arrives; the pending messages only when asked), and the page's own controls. */
const DASHBOARD_SCRIPT_MAIN = String.raw`
  function connection(ok, text) {
    var node = el('connection');
    node.classList.toggle('live', ok);
    node.classList.toggle('down', !ok);
    setText('connection-text', text);
  }

  function loadInfo() {
    return request('GET', '/api/info').then(function (info) {
      state.info = info;
      state.readsNeedToken = !!info.readRequiresToken;
      setText('version', 'outboxer ' + info.version + ' · payloads ' + info.payloads);
    }, function (error) {
      if (error.status === 401) state.readsNeedToken = true;
      throw error;
    });
  }

  function poll() {
    clearTimeout(state.timer);
    if (state.polling) { state.again = true; return; }
    if (document.hidden) return;
    if (state.readsNeedToken && !state.token) { updateControls(); connection(false, 'Waiting for the admin token'); return; }
    state.polling = true;
    var ready = state.info ? Promise.resolve() : loadInfo();
    ready.then(function () {
      var now = Date.now();
      var due = SECTIONS.filter(function (part) { return !part.every || !part.next || now >= part.next; });
      return Promise.allSettled(due.map(function (part) {
        return request('GET', part.path).then(function (data) {
          if (part.every) part.next = Date.now() + part.every;
          if (part.errorId) showError(part.errorId, null);
          part.render(data);
        }, function (error) {
          if (part.errorId) showError(part.errorId, error);
          throw error;
        });
      }));
    }).then(function (results) {
      var failures = results.filter(function (r) { return r.status === 'rejected'; });
      if (failures.length === 0) connection(true, 'Live');
      else connection(false, failures[0].reason.message);
      setText('updated', 'updated ' + new Date().toLocaleTimeString());
    }, function (error) {
      connection(false, error.status === 401 ? 'The admin token was refused' : 'Cannot reach the server: ' + error.message);
    }).then(function () {
      state.polling = false;
      updateControls();
      pendingAfterPoll();
      state.timer = setTimeout(poll, state.again ? 0 : POLL_MS);
      state.again = false;
    });
  }
  /** What one refresh reads; each part is drawn as soon as its answer arrives. The lag per topic (a scan of every pending row, cached 5 s by the server) is read every 10 s only. */
  var SECTIONS = [
    { path: '/api/stats', errorId: '', render: renderStats },
    { path: '/api/relays', errorId: 'relays-error', render: renderRelays },
    { path: '/api/topics?limit=50', errorId: 'topics-error', render: renderTopics, every: TOPICS_POLL_MS },
    { path: '/api/topics/paused', errorId: 'paused-error', render: renderPaused },
    { path: '/api/destinations/paused', errorId: 'paused-destinations-error', render: renderPausedDestinations },
    { path: '/api/dead?limit=100', errorId: 'dead-error', render: renderDead },
  ];

  el('token').addEventListener('input', function (event) {
    state.token = event.target.value.trim();
    updateControls();
    if (state.readsNeedToken && state.token) poll();
  });
  el('token-form').addEventListener('submit', function (event) { event.preventDefault(); poll(); });
  el('pause-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var topic = el('pause-topic').value.trim();
    var reason = el('pause-reason').value.trim();
    mutate(event.submitter || el('pause-form').querySelector('button'), '/api/topics/pause', { topic: topic, reason: reason }, function (r) {
      el('pause-reason').value = '';
      return r.paused ? 'Paused ' + topic + ': every relay holds its messages until it is resumed.' : topic + ' was paused already.';
    });
  });
  el('pause-destination-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var destination = el('pause-destination').value.trim();
    var reason = el('pause-destination-reason').value.trim();
    mutate(event.submitter || el('pause-destination-form').querySelector('button'), '/api/destinations/pause', { destination: destination, reason: reason }, function (r) {
      el('pause-destination-reason').value = '';
      return r.paused ? 'Paused destination ' + destination + ': every relay holds its messages, every topic, until it is resumed.' : destination + ' was paused already.';
    });
  });
  el('retry-all').addEventListener('click', function (event) {
    mutate(event.currentTarget, '/api/dead/retry', { all: true }, function (r) { return plural(r.retried, 'dead message') + ' pending again.'; });
  });
  el('purge-all').addEventListener('click', function (event) {
    if (!window.confirm('Delete every dead message for good? This cannot be undone.')) return;
    mutate(event.currentTarget, '/api/dead/purge', { all: true }, function (r) { return plural(r.purged, 'dead message') + ' purged.'; });
  });
  document.addEventListener('visibilitychange', function () { if (!document.hidden) { poll(); loadPending(false); } });
  updateControls();
  poll();
`;

/**
 * The observatory's script (plain browser JavaScript, no build step). It polls the JSON API every 2 s (the lag
 * per topic every 10 s) and writes every value with `textContent`, never as markup. The admin token lives in a variable of this page
 * only: no cookie, no storage; it is sent as `Authorization: Bearer` on changes, and on reads when
 * `/api/info` says reads need it. Rows are kept by id between polls, so focus and clicks survive a refresh.
 * The four parts share one function scope.
 */
export const DASHBOARD_SCRIPT = `(function () {\n  'use strict';\n${DASHBOARD_SCRIPT_BASICS}\n${DASHBOARD_SCRIPT_VIEWS}\n${DASHBOARD_SCRIPT_PENDING}\n${DASHBOARD_SCRIPT_MAIN}})();\n`;
