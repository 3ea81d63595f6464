/**
 * An environment's history (its transition commits, one entry per operation, with who asked and
 * why) and the page of one run: the operations that carry its id and what each did to each unit.
 */
import type { LogEntry, LogReport } from '../report/types';
import { html, type Html } from './html';
import { badge, diagnostics, entryList, environmentHref, historyHref, page, runHref, unitHref } from './parts';

/** How many operations the history page shows unless asked for all. */
export const HISTORY_PAGE_SIZE = 50;

export function historyPageOf(log: LogReport, all: boolean, version: string): Html {
  const env = log.environment;
  const more = log.truncated ? html`<p class="more">Older operations exist. <a href="${historyHref(env)}?all=1">Show all</a></p>` : '';
  const body = html`<h1>History of ${env}</h1>
${diagnostics([...log.errors, ...log.warnings])}
<p class="muted">${all ? 'Every operation' : `The newest ${HISTORY_PAGE_SIZE} operations`}, newest first: each is a transition commit on the desired or observed branch, or both.</p>
${entryList(env, log.entries)}
${more}`;
  return page({ title: `History of ${env}`, crumbs: [[env, environmentHref(env)], ['History', historyHref(env)]], version, body });
}

/** Each unit the run's operations named, with its latest result in the run (entries are newest first). */
export function runUnits(entries: readonly LogEntry[]): [string, string][] {
  const units = new Map<string, string>();
  for (const e of entries) for (const [u, r] of Object.entries(e.units)) if (!units.has(u)) units.set(u, r);
  return [...units];
}

export function runPageOf(env: string, run: string, data: { log: LogReport; entries: LogEntry[] }, version: string): Html {
  const units = runUnits(data.entries);
  const table = units.length === 0
    ? html`<p class="empty">No operation of this run named a unit.</p>`
    : html`<table class="run-units"><thead><tr><th>Unit</th><th>Result</th></tr></thead><tbody>${units.map(([u, r]) => html`<tr data-unit="${u}"><td><a href="${unitHref(env, u)}">${u}</a></td><td>${badge(r)}</td></tr>`)}</tbody></table>`;
  const body = html`<h1>Run <code>${run}</code></h1>
${diagnostics([...data.log.errors, ...data.log.warnings])}
${data.entries.length === 0 ? html`<p class="empty">No transition commit of ${env} carries this run.</p>` : ''}
<section><h2>Units</h2>${table}</section>
<section><h2>Operations</h2>${entryList(env, data.entries)}</section>`;
  return page({ title: `Run ${run}`, crumbs: [[env, environmentHref(env)], ['History', historyHref(env)], [run, runHref(env, run)]], version, body });
}
