/**
 * The observatory's page: static markup only. Every value is filled in by /dashboard.js with `textContent`,
 * so the page carries no data, no inline script and no inline style (the server's CSP forbids both).
 */
export const DASHBOARD_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>outboxer observatory</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='4' fill='%232563eb'/%3E%3Cpath d='M4 8h8M9 5l3 3-3 3' stroke='white' stroke-width='1.6' fill='none'/%3E%3C/svg%3E">
<link rel="stylesheet" href="/dashboard.css">
<script src="/dashboard.js" defer></script>
</head>
<body>
<header class="topbar">
  <div class="brand">
    <span class="logo" aria-hidden="true"></span>
    <h1>outboxer <span class="muted">observatory</span></h1>
  </div>
  <p class="connection" id="connection" role="status"><span class="dot" aria-hidden="true"></span><span id="connection-text">Connecting…</span></p>
  <form class="token" id="token-form" autocomplete="off">
    <label for="token">Admin token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" placeholder="kept in this tab only">
  </form>
</header>
<p class="notice" id="notice" hidden></p>
<p class="flash" id="flash" role="status" aria-live="polite"></p>
<main>
  <section class="cards" aria-labelledby="overview-title">
    <h2 id="overview-title" class="visually-hidden">Overview</h2>
    <article class="card">
      <h3>Pending</h3>
      <p class="value" id="pending">–</p>
      <p class="hint">ready to publish now</p>
    </article>
    <article class="card">
      <h3>Scheduled</h3>
      <p class="value" id="scheduled">–</p>
      <p class="hint">delayed, backing off or held</p>
    </article>
    <article class="card" id="dead-card">
      <h3>Dead</h3>
      <p class="value" id="dead">–</p>
      <p class="hint">parked, waiting for an operator</p>
    </article>
    <article class="card">
      <h3>Oldest pending</h3>
      <p class="value" id="oldest">–</p>
      <p class="hint">oldest not yet published, delayed included</p>
    </article>
    <article class="card card-wide">
      <h3>Throughput</h3>
      <div class="throughput">
        <p class="value"><span id="rate">–</span> <span class="unit">msg/s</span></p>
        <div class="spark" id="spark" role="img" aria-label="Throughput over the last minute"></div>
      </div>
      <p class="hint"><span id="published">–</span> published by this relay</p>
    </article>
  </section>

  <div class="columns">
    <section class="panel" aria-labelledby="relay-title">
      <h2 id="relay-title">This relay</h2>
      <p class="empty" id="relay-empty" hidden>No relay runs in this process: the numbers above come from the database.</p>
      <dl class="facts" id="relay-facts">
        <div><dt>Owner</dt><dd id="relay-owner">–</dd></div>
        <div><dt>Ready</dt><dd id="relay-ready">–</dd></div>
        <div><dt>Broker</dt><dd id="relay-broker">–</dd></div>
        <div><dt>Database</dt><dd id="relay-database">–</dd></div>
        <div><dt>Partitions held</dt><dd id="relay-partitions">–</dd></div>
        <div><dt>Relays alive</dt><dd id="relay-alive">–</dd></div>
        <div><dt>Retries / dead</dt><dd id="relay-failures">–</dd></div>
      </dl>
    </section>

    <section class="panel panel-wide" aria-labelledby="partitions-title">
      <div class="panel-head">
        <h2 id="partitions-title">Relays and partitions</h2>
        <span class="pill" id="unowned-pill" hidden></span>
        <span class="pill" id="trouble-pill" hidden></span>
      </div>
      <p class="error" id="relays-error" hidden></p>
      <div class="partition-grid" id="partition-grid" role="img" aria-label="Partitions by owner"></div>
      <table class="relay-table">
        <thead><tr><th scope="col">Relay</th><th scope="col" class="num">Partitions</th><th scope="col" class="num">Lease expires in</th><th scope="col">State</th></tr></thead>
        <tbody id="relays-body"></tbody>
      </table>
      <p class="empty" id="relays-empty" hidden>No relay is alive: nothing publishes.</p>
    </section>
  </div>

  <div class="columns">
    <section class="panel" aria-labelledby="lag-title">
      <h2 id="lag-title">Lag per topic</h2>
      <p class="error" id="topics-error" hidden></p>
      <table>
        <thead><tr><th scope="col">Topic</th><th scope="col">Destination</th><th scope="col" class="num">Backlog</th><th scope="col" class="num">Oldest</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody id="topics-body"></tbody>
      </table>
      <p class="empty" id="topics-empty" hidden>No backlog: every topic is caught up.</p>
    </section>

    <section class="panel" aria-labelledby="paused-title">
      <h2 id="paused-title">Paused topics</h2>
      <p class="error" id="paused-error" hidden></p>
      <p class="error" id="paused-destinations-error" hidden></p>
      <table>
        <thead><tr><th scope="col">Topic</th><th scope="col">By</th><th scope="col">Reason</th><th scope="col">Paused for</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody id="paused-body"></tbody>
        <tbody id="paused-destinations-body"></tbody>
        <tbody id="held-body"></tbody>
      </table>
      <p class="empty" id="paused-empty" hidden>No topic is paused.</p>
      <form class="pause-form" id="pause-form">
        <div class="field"><label for="pause-topic">Topic</label><input id="pause-topic" name="topic" required maxlength="255" list="topic-names" autocomplete="off"></div>
        <div class="field"><label for="pause-reason">Reason</label><input id="pause-reason" name="reason" maxlength="500" autocomplete="off" placeholder="optional"></div>
        <button type="submit" class="button" data-mutation>Pause topic</button>
        <datalist id="topic-names"></datalist>
      </form>
      <form class="pause-form" id="pause-destination-form">
        <div class="field"><label for="pause-destination">Destination</label><input id="pause-destination" name="destination" required maxlength="64" autocomplete="off" placeholder="e.g. partner"></div>
        <div class="field"><label for="pause-destination-reason">Reason for the destination</label><input id="pause-destination-reason" name="reason" maxlength="500" autocomplete="off" placeholder="optional"></div>
        <button type="submit" class="button" data-mutation>Pause destination</button>
      </form>
    </section>
  </div>

  <section class="panel" id="pending-panel" aria-labelledby="pending-title">
    <div class="panel-head">
      <h2 id="pending-title">Pending messages</h2>
      <span class="hint" id="pending-picked" hidden></span>
      <div class="actions">
        <button type="button" class="button danger" id="pending-delete" data-mutation data-idle="Select the messages to delete first">Delete selected</button>
      </div>
    </div>
    <form class="filter-form" id="pending-filter" role="search" aria-label="Filter pending messages">
      <div class="field"><label for="pending-topic">Topic filter</label><input id="pending-topic" name="topic" maxlength="255" list="topic-names" autocomplete="off" placeholder="any topic"></div>
      <div class="field"><label for="pending-key">Key filter</label><input id="pending-key" name="key" maxlength="512" autocomplete="off" placeholder="any key"></div>
      <div class="field"><label for="pending-destination">Destination filter</label><input id="pending-destination" name="destination" maxlength="64" pattern="[A-Za-z0-9][\w\-]*" title="a destination's name; default: messages stored without one" list="destination-names" autocomplete="off" placeholder="any destination"></div>
      <datalist id="destination-names"></datalist>
      <div class="field field-narrow"><label for="pending-older">Older than (seconds)</label><input id="pending-older" name="olderThanSeconds" type="number" min="0" max="9999999" step="1" inputmode="numeric" placeholder="0"></div>
      <button type="submit" class="button">Refresh</button>
    </form>
    <p class="hint"><span id="pending-read">Not listed yet.</span> <span id="pending-payloads"></span></p>
    <p class="error" id="pending-error" hidden></p>
    <div class="scroll pending-scroll">
      <table class="pending-table">
        <thead><tr><th scope="col"><input type="checkbox" id="pending-all" aria-label="Select every listed message"></th><th scope="col">Message</th><th scope="col" class="num">Seq</th><th scope="col">Topic</th><th scope="col">Destination</th><th scope="col">Key</th><th scope="col" class="num">Attempts</th><th scope="col">Age</th><th scope="col">Due</th><th scope="col">Last error</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody id="pending-body"></tbody>
      </table>
    </div>
    <p class="empty" id="pending-empty" hidden></p>
    <p class="hint" id="pending-more" hidden></p>
    <section class="detail" id="pending-detail" aria-labelledby="pending-detail-title" tabindex="-1" hidden>
      <div class="panel-head">
        <h3 id="pending-detail-title">Message</h3>
        <button type="button" class="button" id="pending-detail-close">Close</button>
      </div>
      <p class="error" id="pending-detail-error" hidden></p>
      <dl class="facts" id="pending-detail-facts" hidden>
        <div><dt>Type</dt><dd id="pending-detail-type">–</dd></div>
        <div><dt>Destination</dt><dd id="pending-detail-destination">–</dd></div>
        <div><dt>Content type</dt><dd id="pending-detail-content-type">–</dd></div>
        <div><dt>Header names</dt><dd id="pending-detail-header-names">–</dd></div>
        <div><dt>Body size</dt><dd id="pending-detail-size">–</dd></div>
        <div><dt>Created</dt><dd id="pending-detail-created">–</dd></div>
        <div><dt>Due</dt><dd id="pending-detail-due">–</dd></div>
      </dl>
      <p class="empty" id="pending-detail-hidden" hidden>Payload hidden (server started without exposePayloads).</p>
      <div class="payload" id="pending-detail-payload" hidden>
        <table id="pending-detail-headers">
          <thead><tr><th scope="col">Header</th><th scope="col">Value</th></tr></thead>
          <tbody id="pending-detail-header-body"></tbody>
        </table>
        <h4 id="pending-detail-body-label">Body</h4>
        <pre class="body" id="pending-detail-body" tabindex="0" aria-labelledby="pending-detail-body-label"></pre>
      </div>
    </section>
  </section>

  <section class="panel" aria-labelledby="dead-title">
    <div class="panel-head">
      <h2 id="dead-title">Dead messages</h2>
      <div class="actions">
        <button type="button" class="button" id="retry-all" data-mutation>Retry all</button>
        <button type="button" class="button danger" id="purge-all" data-mutation>Purge all</button>
      </div>
    </div>
    <p class="error" id="dead-error" hidden></p>
    <div class="scroll">
      <table class="dead-table">
        <thead><tr><th scope="col">Message</th><th scope="col">Topic</th><th scope="col">Destination</th><th scope="col">Key</th><th scope="col" class="num">Attempts</th><th scope="col">Reason</th><th scope="col">Dead for</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody id="dead-body"></tbody>
      </table>
    </div>
    <p class="empty" id="dead-empty" hidden>No dead messages.</p>
    <p class="hint" id="dead-more" hidden></p>
  </section>
</main>
<footer class="footer">
  <span id="version">outboxer</span> · refreshes every 2 s · <span id="updated">not updated yet</span>
</footer>
</body>
</html>
`;
