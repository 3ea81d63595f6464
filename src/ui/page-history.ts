/**
 * An environment's history (its transition commits, one entry per operation, with who asked and
 * why) and the page of one run: the operations that carry its id and what each did to each unit,
 * and while the run is live, the units it has started.
 */
import type { RunPageData } from '../commands/inspect/web-view';
import type { LogEntry, LogReport, StatusReport } from '../report/types';
import { html, type Html } from './html';
import { badge, diagnostics, entryList, environmentHref, historyHref, leaseText, page, runHref, unitHref, type Live } from './parts';

/** How many operations the history page shows unless asked for all. */
export const HISTORY_PAGE_SIZE = 50;

export function historyPageOf(log: LogReport, all: boolean, live: Live | undefined): Html {
  const env = log.environment;
  const more = log.truncated ? html`<p class="more">Older operations exist. <a href="${historyHref(env)}?all=1">Show all</a></p>` : '';
  const body = html`<h1>History of ${env}</h1>
${diagnostics([...log.errors, ...log.warnings])}
<p class="muted">${all ? 'Every operation' : `The newest ${HISTORY_PAGE_SIZE} operations`}, newest first: each is a transition commit on the desired or observed branch, or both.</p>
${entryList(env, log.entries)}
${more}`;
  return page({
    title: `History of ${env}`,
    crumbs: [
      [env, environmentHref(env)],
      ['History', historyHref(env)],
    ],
    live,
    body,
  });
}

/**
 * Each unit of the run with its result: what the run's operations recorded (the latest one wins,
 * entries are newest first), then the units a live run has started and not recorded yet.
 */
function runUnits(entries: readonly LogEntry[], status?: StatusReport, run?: string): [string, string][] {
  const units = new Map<string, string>();
  for (const e of entries) for (const [u, r] of Object.entries(e.units)) if (!units.has(u)) units.set(u, r);
  for (const name of status?.unitOrder ?? []) {
    if (status!.units[name]!.running?.run === run && !units.has(name)) units.set(name, 'running');
  }
  return [...units];
}

/** A run that holds the lease now: who runs it and until when. */
function liveNote(data: RunPageData, run: string): Html {
  const lease = data.status.lease;
  if (lease?.run !== run || lease.status !== 'live') return html``;
  return html`<p class="live-run">${badge('running')} This run holds the lease of ${data.status.environment}: ${leaseText(lease)}</p>`;
}

function runUnitsTable(env: string, units: [string, string][]): Html {
  if (units.length === 0) return html`<p class="empty">No operation of this run named a unit.</p>`;
  const rows = units.map(([u, r]) => html`<tr data-unit="${u}"><td><a href="${unitHref(env, u)}">${u}</a></td><td data-label="Result">${badge(r)}</td></tr>`);
  return html`<table class="run-units"><thead><tr><th>Unit</th><th>Result</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * Does state name the run: an operation carries it, it holds the lease, or a unit's last run,
 * running execution or condition names it? A run that ended without its transition commit is
 * named by its units' conditions or, until imported, by NYL-RUN-UNIMPORTED.
 */
export function runKnown(data: RunPageData, run: string): boolean {
  if (data.entries.length > 0 || data.status.lease?.run === run) return true;
  const units = data.status.unitOrder.map((n) => data.status.units[n]!);
  if (units.some((u) => u.lastRun?.run === run || u.running?.run === run || u.condition?.run === run)) return true;
  return data.status.warnings.some((d) => d.code === 'NYL-RUN-UNIMPORTED' && d.data?.run === run);
}

export function runPageOf(env: string, run: string, data: RunPageData, live: Live | undefined): Html {
  const holdsLease = data.status.lease?.run === run;
  const body = html`<h1>Run <code>${run}</code></h1>
${diagnostics([...data.log.errors, ...data.log.warnings])}
${liveNote(data, run)}
${data.entries.length === 0 && !holdsLease ? html`<p class="empty">No transition commit of ${env} carries this run.</p>` : ''}
<section><h2>Units</h2>${runUnitsTable(env, runUnits(data.entries, data.status, run))}</section>
<section><h2>Operations</h2>${entryList(env, data.entries)}</section>`;
  return page({
    title: `Run ${run}`,
    crumbs: [
      [env, environmentHref(env)],
      ['History', historyHref(env)],
      [run, runHref(env, run)],
    ],
    live,
    body,
  });
}
