/**
 * An environment's page: where its state is, who holds its lease, the dependency graph drawn,
 * every unit with its state and why (the planner's reason: what it waits for, the hold, the
 * approval or the teardown gate), and its latest operations.
 */
import type { EnvironmentPageData } from '../commands/inspect/web-view';
import type { StatusReport, UnitStatus } from '../report/types';
import { graphLegend, graphSvg } from './graph-svg';
import { html, type Html } from './html';
import { badge, diagnostics, entryList, environmentHref, fields, historyHref, leaseText, oid, page, runHref, time, unitHref, type Live } from './parts';

/** Why a unit is in its state: the planner's words, what it waits for (linked), the hold or approval, and the machine reason code. */
export function whyOf(env: string, u: UnitStatus): Html {
  const waits = (u.waits ?? []).map((w) => html`<li>waits for <a href="${unitHref(env, w.unit)}">${w.unit}</a></li>`);
  const hold = u.hold ? html`<li>held by ${u.hold.by}${u.hold.reason ? html`: ${u.hold.reason}` : ''} since ${time(u.hold.since)}</li>` : '';
  const approval = u.approval
    ? html`<li>awaits approval (${u.approval.reason})${u.approval.digest ? html`: <code>--approve ${u.name}=${u.approval.digest}</code>` : ''}</li>`
    : '';
  const code = u.reason ? html`<code class="reason" title="the planner's action and reason code">${u.action ?? ''}/${u.reason}</code>` : '';
  const extra = [waits, hold, approval].flat().filter((x) => x !== '');
  const words = u.detail || (u.state === 'current' ? 'its receipt is current' : '');
  return html`<span class="detail">${words}</span> ${code}${extra.length > 0 ? html`<ul class="why">${extra}</ul>` : ''}`;
}

function lastRunCell(env: string, u: UnitStatus): Html {
  if (!u.lastRun) return html`<span class="muted">never</span>`;
  return html`${badge(u.lastRun.result)} <a class="run" href="${runHref(env, u.lastRun.run)}">${u.lastRun.run.slice(0, 13)}</a><div class="entry-meta">${time(u.lastRun.at)}</div>`;
}

function unitRow(env: string, u: UnitStatus): Html {
  return html`<tr data-unit="${u.name}" data-state="${u.state}">
<td><a class="unit" href="${unitHref(env, u.name)}">${u.name}</a></td>
<td data-label="Kind">${u.kind}</td>
<td data-label="State">${badge(u.state)}</td>
<td data-label="Why">${whyOf(env, u)}</td>
<td data-label="Receipt">${u.receipt}</td>
<td data-label="Last run">${lastRunCell(env, u)}</td>
</tr>`;
}

function unitsTable(status: StatusReport): Html {
  const env = status.environment;
  if (status.unitOrder.length === 0) return html`<p class="empty">No units.</p>`;
  return html`<table class="units">
<thead><tr><th>Unit</th><th>Kind</th><th>State</th><th>Why</th><th>Receipt</th><th>Last run</th></tr></thead>
<tbody>${status.unitOrder.map((n) => unitRow(env, status.units[n]!))}</tbody>
</table>`;
}

function stateFields(status: StatusReport): Html {
  return fields([
    ['Source', oid(status.source)],
    ['Desired', oid(status.desired)],
    ['Observed', oid(status.observed)],
    ['Lease', leaseText(status.lease)],
  ]);
}

export function environmentPageOf(data: EnvironmentPageData, live: Live | undefined): Html {
  const { status, graph, recent } = data;
  const env = status.environment;
  const body = html`<h1>${env}</h1>
${stateFields(status)}
${diagnostics([...status.errors, ...status.warnings, ...status.notes])}
<section class="graph-section"><h2>Graph</h2><div class="graph-box">${graphSvg(graph, (u) => unitHref(env, u))}</div>${graph.nodes.length > 0 ? graphLegend() : ''}</section>
<section><h2>Units</h2>${unitsTable(status)}</section>
<section><h2>Latest operations</h2>${entryList(env, recent.entries)}<p><a class="history" href="${historyHref(env)}">Full history of ${env}</a></p></section>`;
  return page({ title: env, crumbs: [[env, environmentHref(env)]], live, body });
}
