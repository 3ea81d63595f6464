/**
 * The pieces every page of the web view is built from: the page shell, state badges, times,
 * commit ids, diagnostics with their fixes, and an operation of the history. Everything goes
 * through `html`, so every value is escaped.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { LeaseSummary, LogEntry } from '../report/types';
import type { ReadFailure } from './environment-reads';
import { html, type Html, type HtmlValue, pathOf } from './html';

/**
 * What the refresh script needs: the version of the state refs the page was rendered at, the
 * environment whose refs it shows besides the declared ones (an instance), and how often to ask
 * /version whether the refs moved. A page without it (a page about an unknown environment) is
 * not refreshed.
 */
export interface Live {
  version: string;
  environment?: string;
  pollMs: number;
}

interface PageShell {
  title: string;
  /** The breadcrumb after "Environments": [text, href] pairs, the last one the page itself. */
  crumbs: [string, string][];
  live: Live | undefined;
  body: Html;
}

function liveMeta(live: Live | undefined): Html {
  if (!live) return html``;
  return html`<meta name="nyl-state-version" content="${live.version}"${live.environment !== undefined ? html` data-environment="${live.environment}"` : ''} data-poll-ms="${live.pollMs}">
`;
}

/** The whole document. Scripts and styles come from the server's own assets only (the CSP forbids inline ones). */
export function page(shell: PageShell): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${liveMeta(shell.live)}<title>${shell.title} \u00b7 nyl</title>
<link rel="stylesheet" href="/assets/nyl.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<script src="/assets/refresh.js" defer></script>
<script src="/assets/graph.js" defer></script>
</head>
<body>
<header class="top"><a class="brand" href="/">nyl</a>${crumbsOf(shell.crumbs)}<span class="live" id="live" title="Refreshes when the state refs change">read-only</span></header>
<main>
${shell.body}
</main>
<footer>A read-only view of the state refs, served by <code>nyl ui</code>.</footer>
</body>
</html>
`;
}

function crumbsOf(crumbs: [string, string][]): Html {
  const all: [string, string][] = [['Environments', '/'], ...crumbs];
  return html`<nav class="crumbs" aria-label="Breadcrumb">${all.map(([text, href], i) => (i === all.length - 1 ? html`<span aria-current="page">${text}</span>` : html`<a href="${href}">${text}</a><span class="sep">/</span>`))}</nav>`;
}

/** A unit state, a result or an operation as a coloured word. */
export function badge(word: string, title?: string): Html {
  return html`<span class="badge state-${word.replace(/[^a-z0-9-]/g, '')}"${title ? html` title="${title}"` : ''}>${word}</span>`;
}

/** A time as it was recorded (ISO 8601 UTC), shown to the second. */
export function time(iso: string | undefined): Html {
  if (!iso) return html``;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}</time>`;
}

/** A commit or object id, shortened, with the full id on hover. */
export function oid(id: string | undefined): Html {
  return id ? html`<code class="oid" title="${id}">${id.slice(0, 12)}</code>` : html``;
}

export function environmentHref(env: string): string {
  return pathOf('environments', env);
}

export function unitHref(env: string, unit: string): string {
  return pathOf('environments', env, 'units', unit);
}

export function historyHref(env: string): string {
  return pathOf('environments', env, 'history');
}

export function runHref(env: string, run: string): string {
  return pathOf('environments', env, 'runs', run);
}

/** Errors, warnings and notes, each with its code and fix, as the CLI prints them. */
export function diagnostics(list: readonly Diagnostic[]): Html {
  if (list.length === 0) return html``;
  return html`<ul class="diagnostics">${list.map(
    (d) =>
      html`<li class="diag ${d.severity}"><span class="code">${d.code}</span> ${d.message}${d.fix ? html`<div class="fix">fix: ${fixText(d.fix)}</div>` : ''}</li>`,
  )}</ul>`;
}

/** A fix as text, its `commands` (between backticks, as the catalog writes them) as code. */
export function fixText(fix: string): Html {
  return html`${fix.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

/** Who holds the lease, or that nobody does. */
export function leaseText(lease: LeaseSummary | undefined): Html {
  if (!lease) return html`<span class="muted">free</span>`;
  const h = lease.holder;
  const who = html`${h.name}@${h.host} (pid ${h.pid})`;
  if (lease.status === 'broken')
    return html`${badge('broken')} ${who}, broken by ${lease.broken?.by ?? '?'}${lease.broken?.reason ? html`: ${lease.broken.reason}` : ''}`;
  return html`${badge(lease.status === 'live' ? 'held' : 'expired')} ${who} for ${lease.operation} run <code>${lease.run}</code>, until ${time(lease.deadline)}`;
}

/** One operation of the history: when, what, who and why, and what it did to each unit. */
function entryItem(env: string, e: LogEntry): Html {
  const units = Object.entries(e.units);
  return html`<li class="entry">
<div class="entry-head">${time(e.at)} ${badge(e.operation)} <span class="headline">${e.headline}</span></div>
<div class="entry-meta">${e.by ? html`by <span class="by">${e.by}</span>` : ''}${e.run ? html` \u00b7 run <a class="run" href="${runHref(env, e.run)}">${e.run}</a>` : ''}${e.source ? html` \u00b7 source <code>${e.source.slice(0, 12)}</code>` : ''}${e.desired ? html` \u00b7 desired ${oid(e.desired)}` : ''}${e.observed ? html` \u00b7 observed ${oid(e.observed)}` : ''}</div>
${e.reason ? html`<div class="reason">reason: ${e.reason}</div>` : ''}
${units.length > 0 ? html`<div class="entry-units">${units.map(([u, r]) => html`<a href="${unitHref(env, u)}">${u}</a> ${badge(r)} `)}</div>` : ''}
</li>`;
}

export function entryList(env: string, entries: readonly LogEntry[]): Html {
  if (entries.length === 0) return html`<p class="empty">No operations yet.</p>`;
  return html`<ol class="entries">${entries.map((e) => entryItem(env, e))}</ol>`;
}

/** A value of an output or a document: strings as they are, anything else as JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** A definition list of the present fields. */
export function fields(rows: [string, HtmlValue][]): Html {
  const shown = rows.filter(([, v]) => v !== undefined && v !== '' && v !== null);
  return html`<dl class="fields">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

/** Why an environment shows nothing: when it could not be read, and when the view reads it again. */
export function unreadable(env: string, failure: ReadFailure): Html {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const why = failure.timedOut ? ' (it did not answer in time)' : '';
  return html`<p class="unreadable" data-retry-at="${iso(failure.retryAt)}">nyl ui could not read the state of ${env} at ${time(iso(failure.at))}${why}; it reads it again at ${time(iso(failure.retryAt))}, not before.</p>`;
}
