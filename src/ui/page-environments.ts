/**
 * The first page: every declared environment with its units' states, its latest operation and
 * who holds its lease; then the instances of the EnvironmentTemplates that state holds, and a
 * form that opens any instance by name.
 */
import type { EnvironmentSummary, ProjectOverview } from '../commands/inspect/web-view';
import type { StatusReport } from '../report/types';
import { html, type Html } from './html';
import type { FailureOf } from './environment-reads';
import { badge, diagnostics, environmentHref, historyHref, leaseText, page, time, unreadable, type Live } from './parts';

/** The units of a status counted by state, most urgent first. */
function stateCounts(status: StatusReport | undefined): [string, number][] {
  const counts = new Map<string, number>();
  for (const name of status?.unitOrder ?? []) {
    const state = status!.units[name]!.state;
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  return [...counts].sort(([a, x], [b, y]) => urgency(a) - urgency(b) || y - x || (a < b ? -1 : 1));
}

const URGENT = ['failed', 'uncertain', 'blocked', 'drifted', 'awaiting-approval', 'running', 'held'];

function urgency(state: string): number {
  const i = URGENT.indexOf(state);
  return i === -1 ? (state === 'current' ? URGENT.length + 1 : URGENT.length) : i;
}

function unitsCell(s: EnvironmentSummary): Html {
  const counts = stateCounts(s.status);
  if (counts.length === 0) return html`<span class="muted">no units</span>`;
  return html`${counts.map(([state, n]) => html`${badge(state, `${n} ${state}`)}<span class="count">${n}</span> `)}`;
}

function lastCell(s: EnvironmentSummary): Html {
  if (!s.last) return html`<span class="muted">none</span>`;
  return html`${badge(s.last.operation)} ${s.last.headline}<div class="entry-meta">${time(s.last.at)}${s.last.by ? html` by ${s.last.by}` : ''} \u00b7 <a href="${historyHref(s.name)}">history</a></div>`;
}

function environmentRow(s: EnvironmentSummary, failureOf: FailureOf): Html {
  const problems = [...s.errors, ...(s.status?.errors ?? [])];
  const failure = failureOf(s.name);
  const labels = Object.entries(s.labels).map(([k, v]) => html`<span class="label">${k}=${v}</span> `);
  return html`<tr data-environment="${s.name}">
<td><a class="env" href="${environmentHref(s.name)}">${s.name}</a><div>${labels}</div></td>
<td data-label="Units">${unitsCell(s)}${failure ? unreadable(s.name, failure) : ''}${diagnostics(problems)}</td>
<td data-label="Last operation">${lastCell(s)}</td>
<td data-label="Lease">${leaseText(s.status?.lease)}</td>
</tr>`;
}

function environmentsTable(summaries: readonly EnvironmentSummary[], failureOf: FailureOf): Html {
  return html`<table class="environments">
<thead><tr><th>Environment</th><th>Units</th><th>Last operation</th><th>Lease</th></tr></thead>
<tbody>${summaries.map((s) => environmentRow(s, failureOf))}</tbody>
</table>`;
}

/** The instances state holds, and a form that opens any instance by name (one whose state was deleted, or one a template cannot list). */
function templatesSection(overview: ProjectOverview, failureOf: FailureOf): Html {
  const { patterns, instances } = overview;
  if (patterns.length === 0) return html``;
  const listed = instances.length > 0 ? environmentsTable(instances, failureOf) : html`<p class="empty">No instance has state.</p>`;
  return html`<section class="templates"><h2>Instances of ${patterns.map((p, i) => html`${i > 0 ? ', ' : ''}<code>${p}</code>`)}</h2>
${diagnostics(overview.errors)}
${listed}
<form method="get" action="/open"><label>Open an instance by name <input name="environment" required placeholder="${patterns[0]!.replace('*', '123')}"></label> <button type="submit">Open</button></form>
</section>`;
}

export function environmentsPage(overview: ProjectOverview, live: Live | undefined, failureOf: FailureOf = () => undefined): Html {
  const body = html`<h1>Environments${overview.project ? html` <span class="muted">of ${overview.project}</span>` : ''}</h1>
${overview.environments.length === 0 ? html`<p class="empty">The project declares no Environment.</p>` : environmentsTable(overview.environments, failureOf)}
${templatesSection(overview, failureOf)}`;
  return page({ title: 'Environments', crumbs: [], live, body });
}
