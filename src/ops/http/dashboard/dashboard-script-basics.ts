/**
 * The first part of the observatory's script (dashboard-script.ts puts the parts together in one function
 * scope): its state, formatting, DOM helpers, the API request, and the controls that change something.
 */
export const DASHBOARD_SCRIPT_BASICS = String.raw`
  var POLL_MS = 2000;
  var TOPICS_POLL_MS = 10000;
  var SPARK_POINTS = 30;
  var OWNER_COLOURS = 10;
  var SVG = 'http://www.w3.org/2000/svg';
  var state = { token: '', info: null, readsNeedToken: false, last: null, rates: [], timer: 0, polling: false, again: false, deadTotal: 0, listedDead: 0, paused: new Set(), pausedDestinations: 0, held: new Map(), heldCount: 0 };
  var integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  var decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

  function el(id) { return document.getElementById(id); }
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function setText(id, text) { var node = el(id); if (node.textContent !== text) node.textContent = text; }
  function show(id, visible) { el(id).hidden = !visible; }
  function showError(id, error) { var node = el(id); node.hidden = !error; node.textContent = error ? error.message : ''; }

  function age(seconds) {
    var s = Math.max(0, Math.round(seconds));
    if (s < 60) return s + ' s';
    if (s < 3600) return unitPair(Math.floor(s / 60), 'm', s % 60, 's');
    if (s < 86400) return unitPair(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'm');
    return unitPair(Math.floor(s / 86400), 'd', Math.floor((s % 86400) / 3600), 'h');
  }
  function unitPair(major, majorUnit, minor, minorUnit) {
    return major + ' ' + majorUnit + (minor > 0 ? ' ' + minor + ' ' + minorUnit : '');
  }
  /** A destination as people read it: its name, default for the relay's own publisher (null). */
  function destinationName(destination) { return destination === null || destination === undefined ? 'default' : destination; }
  /** A lag entry's row: one per topic and destination (names have no spaces); the topic alone for the default one. */
  function lagKey(t) { return t.destination ? t.topic + ' ' + t.destination : t.topic; }
  function since(iso) {
    var time = make('time', '', age((Date.now() - Date.parse(iso)) / 1000));
    time.dateTime = iso;
    time.title = new Date(iso).toLocaleString();
    return time;
  }

  function request(method, path, body) {
    var headers = { Accept: 'application/json' };
    if (state.token && (method !== 'GET' || state.readsNeedToken)) headers.Authorization = 'Bearer ' + state.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    var init = { method: method, headers: headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) init.body = JSON.stringify(body);
    return fetch(path, init).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (data) {
        if (response.ok) return data;
        var failure = new Error(data && data.error && data.error.message ? data.error.message : 'HTTP ' + response.status);
        failure.status = response.status;
        throw failure;
      });
    });
  }

  /** Keeps one row per key: new keys get a row, gone keys lose theirs, every row is updated in place. */
  function syncRows(tbody, items, keyOf, create, update) {
    var existing = new Map();
    Array.prototype.forEach.call(tbody.rows, function (row) { existing.set(row.dataset.key, row); });
    items.forEach(function (item, index) {
      var key = keyOf(item);
      var row = existing.get(key);
      if (!row) { row = create(item); row.dataset.key = key; }
      existing.delete(key);
      update(row, item);
      if (tbody.rows[index] !== row) tbody.insertBefore(row, tbody.rows[index] || null);
    });
    existing.forEach(function (row) { row.remove(); });
  }
  function cells(row, count) { for (var i = 0; i < count; i++) row.appendChild(document.createElement('td')); return row.cells; }
  /** A button that changes something: enabled by the admin token only (data-mutation). */
  function button(label, className, onClick) {
    var node = control(label, className, onClick);
    node.dataset.mutation = '';
    allowMutation(node, canMutate());
    return node;
  }
  /** A button that only shows or reads: always enabled. */
  function control(label, className, onClick) {
    var node = make('button', className ? 'button ' + className : 'button', label);
    node.type = 'button';
    node.addEventListener('click', function () { onClick(node); });
    return node;
  }

  function canMutate() { return !!state.info && state.info.mutations === 'enabled' && state.token !== ''; }
  function updateControls() {
    var allowed = canMutate();
    document.querySelectorAll('[data-mutation]').forEach(function (node) { allowMutation(node, allowed); });
    var notice = '';
    if (state.info && state.info.mutations === 'disabled') notice = 'Changes are disabled: this server was started without an admin token (--admin-token or OUTBOXER_ADMIN_TOKEN). The page is read-only.';
    else if (state.readsNeedToken && !state.token) notice = 'This server needs the admin token to show anything: enter it above.';
    setText('notice', notice);
    show('notice', notice !== '');
  }
  /** A change control is enabled by the token; one with data-idle (its reason) has nothing to act on yet, and says so. */
  function allowMutation(node, allowed) {
    var idle = node.dataset.idle;
    node.disabled = !allowed || !!idle;
    node.title = !allowed ? mutationHint() : idle || '';
  }
  function mutationHint() {
    if (!state.info) return 'Waiting for the server';
    if (state.info.mutations === 'disabled') return 'Changes are disabled on this server';
    return 'Enter the admin token to make changes';
  }
  function flash(message, failed) {
    var node = el('flash');
    node.textContent = message;
    node.classList.toggle('failed', !!failed);
  }
  function mutate(node, path, body, describe) {
    return change(node, function () { return request('POST', path, body); }, describe);
  }
  /** A change the operator asked for (send makes its requests): its button disabled meanwhile, the outcome flashed, then the page read again. */
  function change(node, send, describe) {
    if (!canMutate()) return Promise.resolve();
    node.disabled = true;
    return send()
      .then(function (result) { flash(describe(result), false); }, function (error) { flash(error.message, true); })
      .then(function () { updateControls(); poll(); });
  }
  function plural(count, word) { return integer.format(count) + ' ' + word + (count === 1 ? '' : 's'); }
`;
