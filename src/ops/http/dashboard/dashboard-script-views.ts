/**
 * The second part of the observatory's script: one function per part of the page, drawing an API answer with
 * `textContent` and DOM nodes only. Rows are kept by key (`syncRows`), so focus and clicks survive a refresh.
 */
export const DASHBOARD_SCRIPT_VIEWS = String.raw`
  function renderStats(data) {
    var stats = data.stats;
    setText('pending', integer.format(stats.pending));
    setText('scheduled', integer.format(stats.scheduled));
    setText('dead', integer.format(stats.dead));
    el('dead-card').classList.toggle('alarm', stats.dead > 0);
    state.deadTotal = stats.dead;
    deadNotListed();
    if (performance.getEntriesByName('outboxer:first-data').length === 0) performance.mark('outboxer:first-data');
    setText('oldest', age(stats.oldestPendingAgeSeconds));
    renderRelay(data.relay);
    if (!data.relay) { setText('rate', '–'); setText('published', '–'); return; }
    var at = Date.parse(data.at);
    var published = data.relay.counts.published;
    setText('published', integer.format(published));
    if (state.last && at > state.last.at && published >= state.last.published) {
      var rate = (published - state.last.published) / ((at - state.last.at) / 1000);
      state.rates.push(rate);
      if (state.rates.length > SPARK_POINTS) state.rates.shift();
      setText('rate', rate < 10 ? decimal.format(rate) : integer.format(rate));
      drawSpark();
    }
    state.last = { at: at, published: published };
  }

  function renderRelay(relay) {
    show('relay-empty', !relay);
    show('relay-facts', !!relay);
    if (!relay) return;
    var reasons = [];
    if (!relay.running) reasons.push('not running');
    if (!relay.relayId) reasons.push('not joined');
    if (!relay.database.reachable) reasons.push('database unreachable');
    if (relay.broker === 'disconnected') reasons.push('broker disconnected');
    fact('relay-owner', relay.owner, '');
    fact('relay-ready', reasons.length === 0 ? 'ready' : 'not ready: ' + reasons.join(', '), reasons.length === 0 ? 'ok' : 'bad');
    fact('relay-broker', relay.broker, relay.broker === 'connected' ? 'ok' : relay.broker === 'disconnected' ? 'bad' : 'warn');
    fact('relay-database', relay.database.reachable ? 'reachable' : 'unreachable', relay.database.reachable ? 'ok' : 'bad');
    fact('relay-partitions', relay.partitions.length + (relay.partitionCount ? ' of ' + relay.partitionCount : ''), '');
    fact('relay-alive', relay.relaysAlive === undefined || relay.relaysAlive === null ? '–' : String(relay.relaysAlive), '');
    fact('relay-failures', integer.format(relay.counts.retried) + ' / ' + integer.format(relay.counts.dead), relay.counts.dead > 0 ? 'warn' : '');
  }
  function fact(id, text, tone) { setText(id, text); el(id).className = tone ? 'state-' + tone : ''; }

  function drawSpark() {
    var host = el('spark');
    var svg = host.firstChild;
    if (!svg) {
      svg = document.createElementNS(SVG, 'svg');
      svg.setAttribute('viewBox', '0 0 ' + (SPARK_POINTS - 1) + ' 40');
      svg.setAttribute('preserveAspectRatio', 'none');
      svg.setAttribute('aria-hidden', 'true');
      var base = document.createElementNS(SVG, 'line');
      base.setAttribute('class', 'base');
      base.setAttribute('x1', '0'); base.setAttribute('x2', String(SPARK_POINTS - 1));
      base.setAttribute('y1', '39.5'); base.setAttribute('y2', '39.5');
      svg.appendChild(base);
      ['area', 'line'].forEach(function (name) {
        var shape = document.createElementNS(SVG, name === 'area' ? 'polygon' : 'polyline');
        shape.setAttribute('class', name);
        svg.appendChild(shape);
      });
      host.appendChild(svg);
    }
    var max = Math.max.apply(null, state.rates.concat([1]));
    var offset = SPARK_POINTS - state.rates.length;
    var points = state.rates.map(function (rate, i) { return (offset + i) + ',' + (38 - (rate / max) * 36).toFixed(2); });
    svg.lastChild.setAttribute('points', points.join(' '));
    svg.children[1].setAttribute('points', offset + ',40 ' + points.join(' ') + ' ' + (SPARK_POINTS - 1) + ',40');
    host.setAttribute('aria-label', 'Throughput over the last ' + state.rates.length * POLL_MS / 1000 + ' seconds, peak ' + decimal.format(max) + ' msg/s');
  }

  function renderRelays(data) {
    var group = data.group;
    var colour = new Map();
    group.relays.forEach(function (relay, i) { colour.set(relay.id, i % OWNER_COLOURS); });
    var owner = new Array(group.partitionCount);
    group.relays.forEach(function (relay) { relay.partitions.forEach(function (p) { owner[p] = relay; }); });
    var grid = el('partition-grid');
    while (grid.children.length > group.partitionCount) grid.lastChild.remove();
    while (grid.children.length < group.partitionCount) grid.appendChild(make('span', 'cell'));
    for (var p = 0; p < group.partitionCount; p++) {
      var holder = owner[p];
      var cell = grid.children[p];
      var className = holder ? 'cell o' + colour.get(holder.id) + (holder.leaving ? ' leaving' : '') : 'cell unowned';
      if (cell.className !== className) cell.className = className;
      cell.title = 'Partition ' + p + ': ' + (holder ? holder.name : 'unowned');
    }
    var unowned = group.unowned.length;
    setText('unowned-pill', plural(unowned, 'unowned partition'));
    show('unowned-pill', unowned > 0);
    grid.setAttribute('aria-label', plural(group.partitionCount, 'partition') + ', ' + unowned + ' unowned, held by ' + plural(group.relays.length, 'relay'));
    syncRows(el('relays-body'), group.relays, function (r) { return r.id; }, function (relay) {
      var row = document.createElement('tr');
      var td = cells(row, 4);
      td[0].append(make('span', 'swatch'), make('span', 'name'));
      if (relay.id === data.self) td[0].appendChild(make('span', 'self', 'this process'));
      td[1].className = 'num'; td[2].className = 'num';
      return row;
    }, function (row, relay) {
      var swatch = 'swatch o' + colour.get(relay.id);
      if (row.cells[0].firstChild.className !== swatch) row.cells[0].firstChild.className = swatch;
      row.cells[0].children[1].textContent = relay.name;
      row.cells[0].title = 'relay id ' + relay.id;
      row.cells[1].textContent = integer.format(relay.partitions.length);
      row.cells[2].textContent = decimal.format(Math.max(0, relay.expiresInMs) / 1000) + ' s';
      var state = row.cells[3];
      if (relay.trouble) {
        state.replaceChildren(make('span', '', 'broker trouble for '), since(relay.trouble.since), make('span', 'trouble', relay.trouble.reason));
        state.className = 'state-bad';
        state.title = relay.trouble.reason;
      } else {
        state.textContent = relay.leaving ? 'leaving' : 'active';
        state.className = relay.leaving ? 'state-warn' : 'state-ok';
        state.title = '';
      }
    });
    show('relays-empty', group.relays.length === 0);
    var troubled = group.relays.filter(function (r) { return !!r.trouble; }).length;
    setText('trouble-pill', plural(troubled, 'relay') + ' cannot reach ' + (troubled === 1 ? 'its' : 'their') + ' broker');
    show('trouble-pill', troubled > 0);
  }

  function renderTopics(data) {
    state.held = new Map();
    data.topics.forEach(function (t) { if (t.relayPause) state.held.set(lagKey(t), t.relayPause); });
    syncRows(el('topics-body'), data.topics, lagKey, function (topic) {
      var row = document.createElement('tr');
      var td = cells(row, 5);
      td[0].append(pendingTopicButton(), make('span', 'hold'));
      td[2].className = 'num'; td[3].className = 'num';
      td[4].appendChild(make('span', 'tag', 'paused'));
      td[4].appendChild(make('span', 'tag bad', 'destination missing'));
      td[4].appendChild(button('Pause', '', function () {
        el('pause-topic').value = row.dataset.topic;
        el('pause-reason').focus();
      }));
      return row;
    }, function (row, topic) {
      row.dataset.topic = topic.topic;
      row.cells[0].firstChild.textContent = topic.topic;
      row.cells[0].firstChild.dataset.destination = destinationName(topic.destination);
      var hold = topic.relayPause;
      row.cells[0].lastChild.textContent = hold ? 'Destination missing: held by the relay for ' + age((Date.now() - Date.parse(hold.since)) / 1000) : '';
      row.cells[0].lastChild.title = hold ? hold.reason + ' (since ' + new Date(hold.since).toLocaleString() + ')' : '';
      row.cells[1].textContent = destinationName(topic.destination);
      row.cells[2].textContent = integer.format(topic.pending);
      row.cells[3].textContent = age(topic.oldestPendingAgeSeconds);
    });
    markPaused();
    show('topics-empty', data.topics.length === 0);
    options('topic-names', data.topics.map(function (t) { return t.topic; }));
    options('destination-names', ['default'].concat(data.topics.map(function (t) { return destinationName(t.destination); })));
    renderHeld(data.topics.filter(function (t) { return !!t.relayPause; }));
  }
  /** A datalist's options: these values, each once. */
  function options(id, values) {
    var list = el(id);
    list.replaceChildren.apply(list, Array.from(new Set(values)).map(function (value) { var option = make('option'); option.value = value; return option; }));
  }

  function renderPaused(data) {
    syncRows(el('paused-body'), data.paused, function (p) { return p.topic; }, function () {
      var row = document.createElement('tr');
      var td = cells(row, 5);
      td[0].className = 'topic';
      td[1].textContent = 'operator';
      td[4].appendChild(button('Resume', '', function (node) {
        var topic = row.dataset.key;
        mutate(node, '/api/topics/resume', { topic: topic }, function (r) { return r.resumed ? 'Resumed ' + topic + '.' : topic + ' was not paused.'; });
      }));
      return row;
    }, function (row, pause) {
      row.cells[0].textContent = pause.topic;
      row.cells[2].textContent = pause.reason;
      row.cells[3].replaceChildren(since(pause.pausedAt));
    });
    state.paused = new Set(data.paused.map(function (p) { return p.topic; }));
    pausedEmpty();
    markPaused();
  }
  /** Destinations an operator paused as a whole: one row each, every topic of it ("(all topics)"), with a Resume button. */
  function renderPausedDestinations(data) {
    syncRows(el('paused-destinations-body'), data.paused, function (p) { return p.destination; }, function () {
      var row = document.createElement('tr');
      var td = cells(row, 5);
      td[0].className = 'topic';
      td[0].append(make('span', 'name', '(all topics)'), make('span', 'dest'));
      td[1].textContent = 'operator';
      td[4].appendChild(button('Resume', '', function (node) {
        var destination = row.dataset.key;
        mutate(node, '/api/destinations/resume', { destination: destination }, function (r) {
          return r.resumed ? 'Resumed destination ' + destination + '.' : 'Destination ' + destination + ' was not paused.';
        });
      }));
      return row;
    }, function (row, pause) {
      row.cells[0].lastChild.textContent = 'to ' + pause.destination;
      row.cells[2].textContent = pause.reason;
      row.cells[3].replaceChildren(since(pause.pausedAt));
    });
    state.pausedDestinations = data.paused.length;
    pausedEmpty();
  }
  /** Topics the relays hold by themselves (destination missing), per destination, from the lag read: no Resume, they resume when it exists. */
  function renderHeld(held) {
    syncRows(el('held-body'), held, lagKey, function () {
      var row = document.createElement('tr');
      var td = cells(row, 5);
      td[1].textContent = 'relay';
      td[0].className = 'topic';
      td[0].append(make('span', 'name'), make('span', 'dest'));
      td[2].className = 'reason';
      td[2].append(make('span', 'summary'), make('span', 'detail'));
      td[4].appendChild(make('span', 'muted', 'resumes by itself'));
      td[4].title = 'Each relay probes the destination with backoff and publishes the held messages once it exists: bind a queue or create the stream.';
      return row;
    }, function (row, topic) {
      var hold = topic.relayPause;
      row.cells[0].firstChild.textContent = topic.topic;
      row.cells[0].lastChild.textContent = 'to ' + destinationName(topic.destination);
      row.cells[2].firstChild.textContent = 'Destination missing (' + plural(hold.held, 'message') + ' held): ';
      row.cells[2].lastChild.textContent = hold.reason;
      row.cells[3].replaceChildren(since(hold.since));
    });
    state.heldCount = held.length;
    pausedEmpty();
  }
  function pausedEmpty() { show('paused-empty', state.paused.size === 0 && state.pausedDestinations === 0 && state.heldCount === 0); }
  /** The lag table shows a paused topic's state instead of its Pause button: paused by an operator (every destination), or held by the relay (one). */
  function markPaused() {
    Array.prototype.forEach.call(el('topics-body').rows, function (row) {
      var actions = row.cells[4].children;
      var paused = state.paused.has(row.dataset.topic);
      var held = !paused && state.held.has(row.dataset.key);
      actions[0].hidden = !paused;
      actions[1].hidden = !held;
      actions[2].hidden = paused || held;
    });
  }

  function renderDead(data) {
    state.listedDead = data.dead.length;
    syncRows(el('dead-body'), data.dead, function (m) { return m.id; }, function () {
      var row = document.createElement('tr');
      var td = cells(row, 8);
      td[4].className = 'num';
      td[5].className = 'reason';
      var id = function () { return row.dataset.key; };
      td[7].appendChild(button('Retry', '', function (node) {
        mutate(node, '/api/dead/retry', { ids: [id()] }, function (r) { return r.retried ? 'Message ' + id() + ' is pending again.' : 'Message ' + id() + ' was no longer dead.'; });
      }));
      td[7].appendChild(button('Purge', 'danger', function (node) {
        if (!window.confirm('Delete dead message ' + id() + ' for good?')) return;
        mutate(node, '/api/dead/purge', { ids: [id()] }, function (r) { return r.purged ? 'Message ' + id() + ' was purged.' : 'Message ' + id() + ' was no longer dead.'; });
      }));
      return row;
    }, function (row, message) {
      var c = row.cells;
      c[0].replaceChildren(make('span', 'type', message.type), make('code', 'id', message.id));
      c[1].textContent = message.topic;
      c[2].textContent = destinationName(message.destination);
      c[3].textContent = message.key === null ? '–' : message.key;
      c[4].textContent = integer.format(message.attempts);
      c[5].textContent = message.reason;
      c[6].replaceChildren(since(message.deadAt));
    });
    show('dead-empty', data.dead.length === 0);
    deadNotListed();
  }
  function deadNotListed() {
    var hidden = state.deadTotal - state.listedDead;
    setText('dead-more', hidden > 0 ? 'Showing the first ' + integer.format(state.listedDead) + '; ' + plural(hidden, 'more dead message') + ' not listed.' : '');
    show('dead-more', hidden > 0);
  }
`;
