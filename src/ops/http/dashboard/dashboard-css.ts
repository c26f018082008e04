/** The observatory's stylesheet: light and dark, system fonts, no external resource. */
export const DASHBOARD_CSS = String.raw`:root {
  --bg: #f5f7fa; --panel: #ffffff; --text: #111827; --muted: #6b7280; --line: #e5e7eb; --soft: #f3f4f6;
  --accent: #2563eb; --accent-soft: #dbeafe; --ok: #15803d; --ok-soft: #dcfce7; --warn: #b45309; --warn-soft: #fef3c7;
  --bad: #b91c1c; --bad-soft: #fee2e2; --radius: 10px;
  --o0: #2563eb; --o1: #16a34a; --o2: #9333ea; --o3: #ea580c; --o4: #0891b2; --o5: #db2777; --o6: #65a30d; --o7: #7c3aed; --o8: #ca8a04; --o9: #0d9488;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0b1020; --panel: #131a2e; --text: #e5e7eb; --muted: #9ca3af; --line: #25304a; --soft: #1a2338;
    --accent: #60a5fa; --accent-soft: #1e3a8a; --ok: #4ade80; --ok-soft: #14532d; --warn: #fbbf24; --warn-soft: #78350f;
    --bad: #f87171; --bad-soft: #7f1d1d;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1, h2, h3, p { margin: 0; }
h1 { font-size: 17px; font-weight: 650; letter-spacing: -0.01em; }
h2 { font-size: 14px; font-weight: 650; }
h3 { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.muted { color: var(--muted); font-weight: 450; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
[hidden] { display: none !important; }

.topbar { display: flex; align-items: center; gap: 20px; padding: 12px 24px; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
.brand { display: flex; align-items: center; gap: 10px; }
.logo { width: 22px; height: 22px; border-radius: 6px; background: linear-gradient(135deg, var(--accent), #7c3aed); }
.connection { display: flex; align-items: center; gap: 8px; color: var(--muted); font-size: 13px; margin-right: auto; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: var(--muted); }
.connection.live .dot { background: var(--ok); box-shadow: 0 0 0 3px var(--ok-soft); }
.connection.down .dot { background: var(--bad); box-shadow: 0 0 0 3px var(--bad-soft); }
.connection.down { color: var(--bad); }
.token { display: flex; align-items: center; gap: 8px; }
.token label { font-size: 13px; color: var(--muted); }

input { font: inherit; color: inherit; background: var(--panel); border: 1px solid var(--line); border-radius: 7px; padding: 6px 9px; min-width: 0; }
input:focus-visible, .button:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.button { font: inherit; font-size: 13px; font-weight: 550; color: var(--accent); background: var(--panel); border: 1px solid var(--line); border-radius: 7px; padding: 5px 11px; cursor: pointer; white-space: nowrap; }
.button:hover:not(:disabled) { background: var(--accent-soft); border-color: var(--accent); }
.button.danger { color: var(--bad); }
.button.danger:hover:not(:disabled) { background: var(--bad-soft); border-color: var(--bad); }
.button:disabled { color: var(--muted); cursor: not-allowed; opacity: 0.6; }

.notice { margin: 16px 24px 0; padding: 10px 14px; border-radius: var(--radius); background: var(--warn-soft); color: var(--warn); font-weight: 500; }
.flash { margin: 0 24px; min-height: 0; }
.flash:not(:empty) { margin-top: 16px; padding: 10px 14px; border-radius: var(--radius); background: var(--ok-soft); color: var(--ok); font-weight: 500; }
.flash.failed:not(:empty) { background: var(--bad-soft); color: var(--bad); }

main { padding: 20px 24px; display: grid; grid-template-columns: minmax(0, 1fr); gap: 20px; max-width: 1440px; margin: 0 auto; }
.cards { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)) minmax(0, 2fr); gap: 16px; }
.card, .panel { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); }
.card { padding: 14px 16px; display: grid; gap: 4px; align-content: start; }
.value { font-size: 28px; font-weight: 650; letter-spacing: -0.02em; font-variant-numeric: tabular-nums; }
.unit { font-size: 13px; font-weight: 500; color: var(--muted); letter-spacing: 0; }
.hint { color: var(--muted); font-size: 12px; }
.card.alarm { border-color: var(--bad); background: linear-gradient(var(--bad-soft), var(--bad-soft)) top / 100% 3px no-repeat, var(--panel); }
.card.alarm .value { color: var(--bad); }
.throughput { display: flex; align-items: center; gap: 16px; }
.spark { flex: 1; height: 40px; min-width: 80px; }
.spark svg { width: 100%; height: 100%; display: block; overflow: visible; }
.spark .base { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
.spark .area { fill: var(--accent-soft); opacity: 0.7; }
.spark .line { fill: none; stroke: var(--accent); stroke-width: 1.5; vector-effect: non-scaling-stroke; stroke-linejoin: round; }

.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 2fr); gap: 20px; }
.columns + .columns { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
.panel { padding: 16px 18px; display: grid; grid-template-columns: minmax(0, 1fr); gap: 12px; align-content: start; }
.panel-head { display: flex; align-items: center; justify-content: space-between; gap: 12px; }
.panel-head h2 { margin-right: auto; }
.actions { display: flex; gap: 8px; }
.empty { color: var(--muted); font-size: 13px; }
.error { color: var(--bad); font-size: 13px; }

.facts { margin: 0; display: grid; gap: 0; }
.facts div { display: flex; justify-content: space-between; gap: 12px; padding: 6px 0; border-bottom: 1px solid var(--line); }
.facts div:last-child { border-bottom: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; font-weight: 550; text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.state-ok { color: var(--ok); }
.state-warn { color: var(--warn); }
.state-bad { color: var(--bad); }
.state-bad .trouble { display: block; color: var(--muted); font-size: 11.5px; font-weight: 450; text-align: left; overflow-wrap: anywhere; }

.tag { font-size: 12px; font-weight: 600; color: var(--warn); background: var(--warn-soft); border-radius: 4px; padding: 2px 7px; }
.tag.bad { color: var(--bad); background: var(--bad-soft); }
td .hold { display: block; color: var(--bad); font-size: 12px; }
td .hold:empty { display: none; }
td .dest { display: block; color: var(--muted); font-size: 12px; }
td.topic { overflow-wrap: anywhere; min-width: 10em; }
td.reason { min-width: 200px; overflow-wrap: anywhere; }
td.reason .detail { color: var(--muted); font-size: 12px; }
.pill { font-size: 12px; font-weight: 600; padding: 2px 9px; border-radius: 999px; background: var(--bad-soft); color: var(--bad); }
.partition-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(18px, 1fr)); gap: 3px; }
.cell { aspect-ratio: 1; border-radius: 3px; background: var(--soft); }
.cell.unowned { background: repeating-linear-gradient(135deg, var(--bad-soft) 0 3px, transparent 3px 6px); box-shadow: inset 0 0 0 1.5px var(--bad); }
.cell.leaving { opacity: 0.45; }
.o0 { background: var(--o0); } .o1 { background: var(--o1); } .o2 { background: var(--o2); } .o3 { background: var(--o3); } .o4 { background: var(--o4); }
.o5 { background: var(--o5); } .o6 { background: var(--o6); } .o7 { background: var(--o7); } .o8 { background: var(--o8); } .o9 { background: var(--o9); }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 8px; vertical-align: -1px; }
.self { font-size: 11px; font-weight: 600; color: var(--accent); background: var(--accent-soft); border-radius: 4px; padding: 1px 6px; margin-left: 8px; white-space: nowrap; }
.relay-table td:last-child { font-weight: 550; }
.relay-table td.state-bad { white-space: normal; max-width: 22em; }

table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th { text-align: left; font-size: 12px; font-weight: 600; color: var(--muted); padding: 6px 10px 6px 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
td { padding: 7px 10px 7px 0; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; }
td time { white-space: nowrap; }
tbody tr:last-child td { border-bottom: 0; }
th:last-child, td:last-child { padding-right: 0; text-align: right; white-space: nowrap; }
.num { text-align: right; }
td .button + .button { margin-left: 6px; }
.scroll { overflow-x: auto; position: relative; }
.dead-table .reason { color: var(--bad); min-width: 240px; }
.dead-table .type { display: block; font-weight: 550; }
.dead-table .id { display: block; color: var(--muted); font-size: 11.5px; white-space: nowrap; }
.link { font: inherit; color: var(--accent); background: none; border: 0; padding: 0; cursor: pointer; text-align: left; overflow-wrap: anywhere; }
.link:hover { text-decoration: underline; }
.link:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; border-radius: 3px; }
.filter-form { display: flex; flex-wrap: wrap; align-items: end; gap: 10px; }
.field-narrow { flex: 0 1 150px; }
input[type="checkbox"] { width: 15px; height: 15px; margin: 0; padding: 0; vertical-align: -2px; accent-color: var(--accent); }
.pending-scroll { max-height: 460px; overflow-y: auto; border-bottom: 1px solid var(--line); }
.pending-scroll thead th { position: sticky; top: 0; z-index: 1; background: var(--panel); }
.pending-table .pick { width: 26px; }
.pending-table .type { display: block; font-weight: 550; }
.pending-table .id { display: block; color: var(--muted); font-size: 11.5px; white-space: nowrap; }
.pending-table .num, .pending-table td:nth-child(8), .pending-table .due { white-space: nowrap; }
.pending-table .reason { color: var(--muted); font-size: 12.5px; min-width: 200px; }
.pending-table .reason.failed { color: var(--bad); }
.pending-table tr.scheduled td:first-child { box-shadow: inset 3px 0 0 var(--warn); padding-left: 8px; }
.pending-table tr.scheduled .due { color: var(--warn); font-weight: 600; }
.pending-table tr.shown td { background: var(--accent-soft); }
.detail { display: grid; gap: 10px; padding: 12px 14px; border: 1px solid var(--line); border-radius: var(--radius); background: var(--soft); }
.detail:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.detail h3, .detail h4 { text-transform: none; letter-spacing: 0; color: var(--text); font-size: 13px; margin: 0; }
.detail h4 { color: var(--muted); font-weight: 600; font-size: 12px; }
.detail .facts { grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); column-gap: 28px; }
.detail .facts div:last-child { border-bottom: 1px solid var(--line); }
.payload { display: grid; gap: 8px; }
.payload th:first-child { width: 30%; }
.payload th:last-child, .payload td:last-child { text-align: left; white-space: normal; overflow-wrap: anywhere; }
.payload pre { margin: 0; padding: 10px 12px; background: var(--panel); border: 1px solid var(--line); border-radius: 7px; max-height: 320px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.pause-form { display: flex; flex-wrap: wrap; align-items: end; gap: 10px; padding-top: 4px; border-top: 1px dashed var(--line); }
.field { display: grid; gap: 3px; flex: 1 1 140px; }
.field label { font-size: 12px; color: var(--muted); }

.footer { color: var(--muted); font-size: 12px; padding: 4px 24px 24px; max-width: 1440px; margin: 0 auto; }

@media (max-width: 1100px) {
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .card-wide { grid-column: 1 / -1; }
  .columns, .columns + .columns { grid-template-columns: minmax(0, 1fr); }
}
@media (max-width: 640px) {
  .topbar { flex-wrap: wrap; padding: 12px 16px; }
  main { padding: 16px; }
}
`;
