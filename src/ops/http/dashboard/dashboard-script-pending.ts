/**
 * The pending messages of the observatory's script (dashboard-script.ts puts the parts together in one function
 * scope): a filtered list, one message's detail, and deleting some. Each list is a query of the table that no
 * server cache shares, so the page reads it when the operator asks (a filter, Refresh, a topic of the lag table, a
 * delete) and by itself only when the panel first shows or the tab is shown again, at most every 10 s; never on
 * the 2 s refresh, which only moves the ages and due times it shows.
 */
export const DASHBOARD_SCRIPT_PENDING = String.raw`
  var PENDING_LIMIT = 100;
  var PENDING_AUTO_MS = 10000;
  var PENDING_DELETE_MAX = 400;
  var pending = { tried: 0, listedAt: 0, path: '', loading: false, again: false, unsupported: false, messages: new Map(), selected: new Set(), shown: '' };

  /** The list's request for the filters as they are now, and whether any is set. */
  function pendingQuery() {
    var parts = ['limit=' + PENDING_LIMIT];
    var topic = el('pending-topic').value.trim();
    var key = el('pending-key').value;
    var destination = el('pending-destination').value.trim();
    var older = el('pending-older').value.trim();
    if (topic) parts.push('topic=' + encodeURIComponent(topic));
    if (key) parts.push('key=' + encodeURIComponent(key));
    if (destination) parts.push('destination=' + encodeURIComponent(destination));
    if (older && Number(older) > 0) parts.push('olderThanSeconds=' + encodeURIComponent(older));
    return { path: '/api/pending?' + parts.join('&'), filtered: parts.length > 1 };
  }

  /**
   * Reads the list: at once when asked; by itself (asked false) only if it was not read in the last 10 s. One read
   * at a time: an ask meanwhile for other filters makes one more read after it (the same filters: the answer coming is fresh).
   */
  function loadPending(asked) {
    if (pending.unsupported || !state.info || (state.readsNeedToken && !state.token)) return;
    if (!asked && Date.now() - pending.tried < PENDING_AUTO_MS) return;
    var form = el('pending-filter');
    if (!form.checkValidity()) { if (asked) form.reportValidity(); return; }
    var query = pendingQuery();
    if (pending.loading) { if (query.path !== pending.path) pending.again = true; return; }
    pending.path = query.path;
    pending.loading = true;
    pending.tried = Date.now();
    el('pending-panel').setAttribute('aria-busy', 'true');
    request('GET', query.path).then(function (data) {
      showError('pending-error', null);
      renderPending(data.pending, query.filtered);
    }, function (error) {
      if (!pendingUnsupported(error)) showError('pending-error', error);
    }).then(function () {
      pending.loading = false;
      el('pending-panel').removeAttribute('aria-busy');
      if (pending.again) { pending.again = false; loadPending(true); }
    });
  }
  /** A store without the pending-message methods (501): the panel goes, for good. */
  function pendingUnsupported(error) {
    if (error.status !== 501) return false;
    pending.unsupported = true;
    show('pending-panel', false);
    return true;
  }
  /** After each 2 s refresh: the first list once the page can read, and the ages and due times moved on. */
  function pendingAfterPoll() {
    if (!state.info) return;
    setText('pending-payloads', state.info.payloads === 'shown'
      ? 'This server shows payloads: a message\'s detail reads its headers and body (audited).'
      : 'This server hides payloads (started without exposePayloads): a message\'s detail shows header names and body size only.');
    if (!pending.listedAt) loadPending(false);
    else tickPending();
  }

  function renderPending(list, filtered) {
    pending.listedAt = Date.now();
    pending.messages = new Map(list.map(function (m) { return [m.id, m]; }));
    pending.selected.forEach(function (id) { if (!pending.messages.has(id)) pending.selected.delete(id); });
    syncRows(el('pending-body'), list, function (m) { return m.id; }, pendingRow, function (row, message) {
      var c = row.cells;
      c[0].firstChild.checked = pending.selected.has(message.id);
      c[0].firstChild.setAttribute('aria-label', 'Select message ' + message.id);
      c[1].firstChild.textContent = message.type;
      c[1].lastChild.textContent = '…' + message.id.slice(-8);
      c[1].lastChild.title = message.id;
      c[2].textContent = message.seq;
      c[3].textContent = message.topic;
      c[4].textContent = destinationName(message.destination);
      c[5].textContent = message.key === null ? '–' : message.key;
      c[6].textContent = integer.format(message.attempts);
      c[8].title = message.dueAt === null ? 'due: published in its key\'s turn' : 'scheduled until ' + new Date(message.dueAt).toLocaleString() + ' (database clock)';
      c[9].textContent = message.lastError === null ? '' : message.lastError;
      c[9].classList.toggle('failed', message.attempts > 0);
      row.classList.toggle('scheduled', message.dueAt !== null);
    });
    tickPending();
    markShown();
    pendingPicked();
    setText('pending-empty', filtered ? 'No pending message matches these filters.' : 'No pending message: everything committed was published or parked dead.');
    show('pending-empty', list.length === 0);
    setText('pending-more', 'Showing the first ' + integer.format(PENDING_LIMIT) + ' in store order: there may be more. Narrow the filters to see others.');
    show('pending-more', list.length >= PENDING_LIMIT);
    setText('pending-read', 'Listed at ' + new Date(pending.listedAt).toLocaleTimeString() + ' (not refreshed every 2 s: Refresh reads it again).');
  }
  function pendingRow() {
    var row = document.createElement('tr');
    var td = cells(row, 11);
    var pick = make('input');
    pick.type = 'checkbox';
    pick.addEventListener('change', function () {
      if (pick.checked) pending.selected.add(row.dataset.key); else pending.selected.delete(row.dataset.key);
      pendingPicked();
    });
    td[0].className = 'pick';
    td[0].appendChild(pick);
    td[1].append(make('span', 'type'), make('code', 'id'));
    td[2].className = 'num'; td[6].className = 'num';
    td[8].className = 'due';
    td[9].className = 'reason';
    var details = control('Details', '', function () { showPending(row.dataset.key); });
    details.setAttribute('aria-controls', 'pending-detail');
    td[10].append(details, button('Delete', 'danger', function (node) { deletePending(node, [row.dataset.key]); }));
    return row;
  }
  /** Ages and due times as they are now: the database's at the read, plus the time since (this page's clock only measures the interval). */
  function tickPending() {
    var elapsed = (Date.now() - pending.listedAt) / 1000;
    Array.prototype.forEach.call(el('pending-body').rows, function (row) {
      var message = pending.messages.get(row.dataset.key);
      if (!message) return;
      var text = age(message.ageSeconds + elapsed);
      if (row.cells[7].textContent !== text) row.cells[7].textContent = text;
      text = dueText(message, elapsed);
      if (row.cells[8].textContent !== text) row.cells[8].textContent = text;
    });
  }
  function dueText(message, elapsed) {
    if (message.dueAt === null) return '–';
    var left = (Date.parse(message.dueAt) - Date.parse(message.createdAt)) / 1000 - message.ageSeconds - elapsed;
    return left < 0.5 ? 'now' : 'in ' + age(left);
  }

  /** The selection: the header box, the count, and Delete selected (idle while none is picked). */
  function pendingPicked() {
    var count = pending.selected.size;
    var listed = el('pending-body').rows.length;
    var all = el('pending-all');
    all.checked = count > 0 && count === listed;
    all.indeterminate = count > 0 && count < listed;
    setText('pending-picked', plural(count, 'message') + ' selected');
    show('pending-picked', count > 0);
    el('pending-delete').dataset.idle = count > 0 ? '' : 'Select the messages to delete first';
    allowMutation(el('pending-delete'), canMutate());
  }
  function pickAll(checked) {
    Array.prototype.forEach.call(el('pending-body').rows, function (row) {
      row.cells[0].firstChild.checked = checked;
      if (checked) pending.selected.add(row.dataset.key); else pending.selected.delete(row.dataset.key);
    });
    pendingPicked();
  }

  /** One message's detail: where it stands, and its headers and body only if this server shows payloads. */
  function showPending(id) {
    pending.shown = id;
    markShown();
    el('pending-detail-title').replaceChildren(make('span', '', 'Message '), make('code', '', id));
    showError('pending-detail-error', null);
    ['pending-detail-facts', 'pending-detail-hidden', 'pending-detail-payload'].forEach(function (part) { show(part, false); });
    show('pending-detail', true);
    el('pending-detail').focus();
    request('GET', '/api/pending/message?id=' + encodeURIComponent(id)).then(function (data) {
      if (pending.shown === id) renderDetail(data.message);
    }, function (error) {
      if (pending.shown !== id || pendingUnsupported(error)) return;
      if (error.status !== 404) { showError('pending-detail-error', error); return; }
      showError('pending-detail-error', { message: 'Message ' + id + ' is no longer pending: it was published, parked dead or deleted.' });
      loadPending(true);
    });
  }
  function renderDetail(message) {
    setText('pending-detail-type', message.type);
    setText('pending-detail-destination', destinationName(message.destination));
    setText('pending-detail-content-type', message.contentType);
    setText('pending-detail-header-names', message.headerNames.length ? message.headerNames.join(', ') : 'none');
    setText('pending-detail-size', plural(message.bodyBytes, 'byte'));
    setText('pending-detail-created', new Date(message.createdAt).toLocaleString());
    setText('pending-detail-due', message.dueAt === null ? 'due now, in its key\'s turn' : 'scheduled until ' + new Date(message.dueAt).toLocaleString());
    show('pending-detail-facts', true);
    var shown = message.payload === 'shown';
    show('pending-detail-hidden', !shown);
    show('pending-detail-payload', shown);
    var headers = el('pending-detail-header-body');
    if (!shown) { headers.replaceChildren(); setText('pending-detail-body', ''); return; }
    headers.replaceChildren.apply(headers, Object.keys(message.headers).sort().map(function (name) {
      var row = document.createElement('tr');
      var td = cells(row, 2);
      td[0].textContent = name;
      td[1].textContent = message.headers[name];
      return row;
    }));
    show('pending-detail-headers', headers.rows.length > 0);
    var binary = message.body.base64 !== undefined;
    setText('pending-detail-body-label', binary ? 'Body (binary, base64)' : 'Body');
    setText('pending-detail-body', binary ? message.body.base64 : message.body.text);
  }
  function closeDetail() {
    var row = el('pending-body').querySelector('tr.shown');
    pending.shown = '';
    show('pending-detail', false);
    markShown();
    if (row) row.cells[10].firstChild.focus();
  }
  function markShown() {
    Array.prototype.forEach.call(el('pending-body').rows, function (row) {
      var shown = row.dataset.key === pending.shown;
      row.classList.toggle('shown', shown);
      row.cells[10].firstChild.setAttribute('aria-expanded', String(shown));
    });
  }

  /** Deletes after a confirmation, at most 400 ids a request; then the counts and the list are read again. */
  function deletePending(node, ids) {
    if (!canMutate() || ids.length === 0) return;
    var what = plural(ids.length, 'pending message');
    var one = ids.length === 1;
    if (!window.confirm('Delete ' + what + '? ' + (one ? 'It' : 'They') + ' will not be published, unless a relay is publishing ' + (one ? 'it' : 'one') + ' right now (then it goes out once). Later messages of the same key will go on.')) return;
    var deleted = 0;
    var batches = [];
    for (var i = 0; i < ids.length; i += PENDING_DELETE_MAX) batches.push(ids.slice(i, i + PENDING_DELETE_MAX));
    change(node, function () {
      return batches.reduce(function (done, batch) {
        return done.then(function () { return request('POST', '/api/pending/delete', { ids: batch }); }).then(function (r) { deleted += r.deleted; });
      }, Promise.resolve()).catch(function (error) {
        pendingUnsupported(error);
        if (deleted > 0) error.message = 'Deleted ' + integer.format(deleted) + ' of ' + what + ', then: ' + error.message;
        throw error;
      });
    }, function () {
      return 'Deleted ' + integer.format(deleted) + ' of ' + what + (deleted < ids.length ? ': the others were no longer pending (published, parked dead or deleted already).' : '.');
    }).then(function () {
      ids.forEach(function (id) { pending.selected.delete(id); });
      if (ids.indexOf(pending.shown) >= 0) closeDetail();
      loadPending(true);
    });
  }

  /** A topic of the lag table as a button: lists that topic's pending messages of that destination. */
  function pendingTopicButton() {
    var node = make('button', 'name link');
    node.type = 'button';
    node.title = 'List its pending messages';
    node.addEventListener('click', function () {
      el('pending-topic').value = node.textContent;
      el('pending-destination').value = node.dataset.destination || '';
      loadPending(true);
      el('pending-panel').scrollIntoView({ block: 'start' });
      el('pending-topic').focus({ preventScroll: true });
    });
    return node;
  }

  el('pending-filter').addEventListener('submit', function (event) { event.preventDefault(); loadPending(true); });
  el('pending-filter').addEventListener('change', function (event) { if (event.target.matches('input')) loadPending(true); });
  el('pending-all').addEventListener('change', function (event) { pickAll(event.target.checked); });
  el('pending-delete').addEventListener('click', function (event) { deletePending(event.currentTarget, Array.from(pending.selected)); });
  el('pending-detail-close').addEventListener('click', closeDetail);
`;
