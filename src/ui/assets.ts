/**
 * The web view's own assets, compiled into Nyl: a stylesheet, two scripts and an icon. They are
 * served from this fixed table and nothing else is: the server never reads a file to answer a
 * request, so no path can reach outside them.
 *
 * The refresh script, while its tab is visible, asks /version every few seconds and reloads the
 * page when the version of the state refs differs from the one the page was rendered at. The
 * graph script highlights a unit's edges on hover and focus. Without them every page is complete,
 * only not live and not highlighted.
 */
import { GRAPH_CSS } from './graph-svg';

interface Asset {
  type: string;
  body: string;
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d232b; --muted: #5d6875; --bg: #ffffff; --panel: #f5f7f9; --line: #d9dee4; --link: #1f5fbf;
  --ok: #1c7c3a; --ok-bg: #e3f4e8; --bad: #b3261e; --bad-bg: #fbe4e2; --wait: #8a5a00; --wait-bg: #fdf0d5; --idle: #5d6875; --idle-bg: #eceff2; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e8ec; --muted: #9aa5b1; --bg: #14181d; --panel: #1c2229; --line: #303942; --link: #7fb0ff;
    --ok: #7ed69a; --ok-bg: #173322; --bad: #ff8f86; --bad-bg: #3d1a17; --wait: #f1c56a; --wait-bg: #3a2d12; --idle: #aab4be; --idle-bg: #262d35; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .oid { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
header.top { display: flex; align-items: center; gap: 16px; padding: 10px 24px; border-bottom: 1px solid var(--line); background: var(--panel); }
.brand { font-weight: 700; font-size: 18px; letter-spacing: 0.5px; color: var(--fg); }
.crumbs { flex: 1; color: var(--muted); }
.crumbs .sep { margin: 0 6px; }
.live { font-size: 12px; color: var(--muted); border: 1px solid var(--line); border-radius: 10px; padding: 1px 8px; }
.live.on { color: var(--ok); border-color: var(--ok); }
.live.off { color: var(--wait); border-color: var(--wait); }
main { padding: 8px 24px 24px; max-width: 1280px; }
footer { padding: 12px 24px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); }
h1 { font-size: 22px; margin: 16px 0 8px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
.muted, .empty { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 7px 10px; border-bottom: 1px solid var(--line); }
thead th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.4px; color: var(--muted); }
table.outputs th { width: 22%; font-weight: 600; }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; font-weight: 600; background: var(--idle-bg); color: var(--idle); white-space: nowrap; }
.count { margin: 0 8px 0 3px; color: var(--muted); }
.state-current, .state-executed, .state-in-sync, .state-done, .state-torn-down { background: var(--ok-bg); color: var(--ok); }
.state-failed, .state-uncertain, .state-broken, .state-drifted, .state-damaged { background: var(--bad-bg); color: var(--bad); }
.state-pending, .state-outdated, .state-awaiting-dependencies, .state-blocked, .state-held, .state-awaiting-approval, .state-running,
.state-pending-teardown, .state-tearing-down, .state-leaving, .state-expired, .state-waiting { background: var(--wait-bg); color: var(--wait); }
.label { display: inline-block; font-size: 11.5px; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; margin-top: 3px; }
.detail { display: inline; }
code.reason { color: var(--muted); margin-left: 6px; }
ul.why { margin: 4px 0 0; padding-left: 18px; color: var(--muted); }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0 12px; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; }
ul.diagnostics { list-style: none; padding: 0; margin: 8px 0; }
.diag { border-left: 3px solid var(--idle); background: var(--panel); padding: 6px 10px; margin: 6px 0; }
.diag.error { border-color: var(--bad); }
.diag.warning { border-color: var(--wait); }
.diag .code { font-weight: 600; }
.diag .fix { color: var(--muted); margin-top: 2px; }
ol.entries { list-style: none; padding: 0; margin: 0; }
.entry { border-bottom: 1px solid var(--line); padding: 8px 0; }
.entry-head time { color: var(--muted); margin-right: 6px; }
.headline { font-weight: 600; }
.entry-meta { color: var(--muted); font-size: 12.5px; }
.entry .reason { font-size: 13px; }
.entry-units { margin-top: 3px; }
.entry-units a { margin-right: 3px; }
/* The graph keeps its size and scrolls in its box (labels stay legible on a phone); the page itself never scrolls sideways. */
.graph-box { overflow: auto; max-height: 85vh; border: 1px solid var(--line); border-radius: 6px; padding: 10px; background: var(--panel); }
.graph-legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 16px; padding: 0; margin: 8px 0 0; font-size: 12.5px; color: var(--muted); }
.graph-legend li { white-space: nowrap; }
.graph-legend li.muted { white-space: normal; }
/* A long word (a digest, a run id) breaks rather than widening the page; 'anywhere' would also squeeze table columns mid-word. */
td, dd, .entry-meta, .headline, .detail, code { overflow-wrap: break-word; }
@media (max-width: 640px) {
  header.top { padding: 8px 12px; gap: 10px; flex-wrap: wrap; }
  main { padding: 4px 12px 16px; }
  footer { padding: 12px; }
  /* Tables become one block per row, each cell on its own line with its column's name. */
  table, thead, tbody, tr, th, td { display: block; width: auto; }
  thead { display: none; }
  tr { border-bottom: 1px solid var(--line); padding: 6px 0; }
  th, td { border: 0; padding: 2px 0; }
  table.outputs th { width: auto; }
  td, dd, .entry-meta, .headline, .detail, code { overflow-wrap: anywhere; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
  dl.fields { grid-template-columns: 1fr; gap: 0; }
  dl.fields dd { margin-bottom: 6px; }
}
section.neighbours { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 0 24px; }
ul.neighbours { list-style: none; padding: 0; margin: 0; }
ul.neighbours li { padding: 3px 0; }
.masked { letter-spacing: 2px; color: var(--muted); }
details { margin: 6px 0; }
summary { cursor: pointer; }
pre.output { background: var(--panel); border-left: 3px solid var(--bad); padding: 6px 10px; border-radius: 4px; max-height: 24em; overflow: auto; }
pre.document { background: var(--panel); padding: 10px; border-radius: 6px; margin-top: 6px; }
form { margin: 8px 0; }
input { font: inherit; padding: 3px 6px; }
`;

const REFRESH = `'use strict';
// nyl ui: reloads the page when the state refs change. The page knows the version of the refs it
// was rendered at; every few seconds, while the tab is visible, it asks /version for the current
// one (a short request: a held stream per tab would exhaust the browser's six connections).
(function () {
  var meta = document.querySelector('meta[name="nyl-state-version"]');
  var live = document.getElementById('live');
  if (!meta || typeof fetch === 'undefined') return;
  var env = meta.getAttribute('data-environment');
  var url = '/version' + (env === null ? '' : '?environment=' + encodeURIComponent(env));
  var every = Number(meta.getAttribute('data-poll-ms')) || 2000;
  var timer;
  function show(text, state) {
    if (live) { live.textContent = text; live.className = 'live ' + state; }
    document.documentElement.setAttribute('data-live', state);
  }
  function later() { clearTimeout(timer); timer = setTimeout(check, every); }
  function check() {
    if (document.hidden) return;
    fetch(url, { cache: 'no-store' })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error(String(r.status))); })
      .then(function (version) {
        if (version !== meta.getAttribute('content')) { show('refreshing', 'on'); location.reload(); return; }
        show('live', 'on');
        later();
      }, function () { show('reconnecting', 'off'); later(); });
  }
  document.addEventListener('visibilitychange', function () { if (!document.hidden) check(); });
  check();
})();
`;

/**
 * The graph's highlight: pointing at a unit (or tabbing to it) dims the rest of the drawing and
 * colours the edges into it (its dependencies) and out of it (its dependents), so that "what does
 * cron depend on" is answered at a glance however many edges there are. Classes only: the CSP
 * forbids inline styles, and GRAPH_CSS says what the classes look like.
 */
const GRAPH_SCRIPT = `'use strict';
// nyl ui: highlights a unit's edges in the dependency graph on hover and keyboard focus.
(function () {
  var svg = document.querySelector('svg.graph:not(.graph-key)');
  if (!svg) return;
  var edges = svg.querySelectorAll('.edge');
  var nodes = svg.querySelectorAll('.node');
  function show(unit) {
    var near = {};
    svg.classList.toggle('focused', unit !== null);
    edges.forEach(function (e) {
      var into = e.getAttribute('data-to') === unit, outOf = e.getAttribute('data-from') === unit;
      e.classList.toggle('into', into);
      e.classList.toggle('out-of', outOf);
      if (into) near[e.getAttribute('data-from')] = true;
      if (outOf) near[e.getAttribute('data-to')] = true;
    });
    nodes.forEach(function (n) {
      var name = n.getAttribute('data-unit');
      n.classList.toggle('focus', name === unit);
      n.classList.toggle('near', near[name] === true);
    });
  }
  function unitOf(target) {
    var node = target && target.closest ? target.closest('.node') : null;
    return node ? node.getAttribute('data-unit') : null;
  }
  svg.addEventListener('mouseover', function (e) { show(unitOf(e.target)); });
  svg.addEventListener('mouseleave', function () { show(unitOf(document.activeElement)); });
  svg.addEventListener('focusin', function (e) { show(unitOf(e.target)); });
  svg.addEventListener('focusout', function () { show(null); });
})();
`;

const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fbf"/><path d="M4 12V4l8 8V4" stroke="#fff" stroke-width="2" fill="none"/></svg>`;

/** The assets by path. Nothing outside this table is ever served. */
export const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['/assets/nyl.css', { type: 'text/css; charset=utf-8', body: STYLE + GRAPH_CSS }],
  ['/assets/refresh.js', { type: 'text/javascript; charset=utf-8', body: REFRESH }],
  ['/assets/graph.js', { type: 'text/javascript; charset=utf-8', body: GRAPH_SCRIPT }],
  ['/assets/favicon.svg', { type: 'image/svg+xml', body: FAVICON }],
]);
