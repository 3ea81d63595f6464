/**
 * A unit's page: its state and why, its condition, hold and drift, its receipt with its outputs
 * (a sensitive output by its name only: no report carries its value, and the page shows no
 * digest of it), its last operations and its desired and observed documents as state holds them,
 * without the digests of sensitive values.
 */
import type { UnitPageData } from '../commands/inspect/web-view';
import { edgeReason } from '../report/graph-edge';
import type { GraphEdge, GraphReport, ShowReport, UnitStatus } from '../report/types';
import { html, type Html } from './html';
import { badge, diagnostics, entryList, environmentHref, fields, page, runHref, time, unitHref, valueText, type Live } from './parts';
import { whyOf } from './page-environment';

/** A list of strings from a document of state, or nothing when it holds something else. */
function linesOf(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? value : undefined;
}

/**
 * What the observed document records of the condition besides what status reports: the last
 * lines the tool printed (masked when recorded), its evidence, whether a retry needs a reason.
 * Only the record of the same run: it describes the condition status shows.
 */
function recordedCondition(show: ShowReport, run: string): { output?: string[]; evidence?: string[]; acknowledgement: boolean } {
  const c = show.observedDocument?.condition as Record<string, unknown> | undefined;
  if (!c || typeof c !== 'object' || c.run !== run) return { acknowledgement: false };
  const [output, evidence] = [linesOf(c.output), linesOf(c.evidence)];
  return { ...(output ? { output } : {}), ...(evidence ? { evidence } : {}), acknowledgement: c.acknowledgementRequired === true };
}

function conditionSection(env: string, u: UnitStatus | undefined, show: ShowReport): Html {
  const c = u?.condition;
  if (!c) return html``;
  // The tool's own words say why far more often than its exit code does: shown, not left in the raw document.
  const recorded = recordedCondition(show, c.run);
  const lines = (list: string[] | undefined, cls: string) => (list ? html`<pre class="${cls}">${list.join('\n')}</pre>` : undefined);
  return html`<section class="condition"><h2>Condition</h2>${fields([
    ['Type', badge(c.type)],
    ['Reason', html`<pre class="text">${c.reason}</pre>`],
    ['Last lines of output', lines(recorded.output, 'output')],
    ['Code', c.code ? html`<code>${c.code}</code>` : undefined],
    ['Evidence', lines(recorded.evidence, 'text')],
    ['Retryable', c.retryable ? 'yes: the next reconcile runs it again' : recorded.acknowledgement ? 'after recover --retry --reason' : 'no'],
    ['Run', html`<a class="run" href="${runHref(env, c.run)}">${c.run}</a>`],
    ['Since', time(c.since)],
  ])}</section>`;
}

/** One neighbour of the unit: its link, its state, and why the edge exists (each reason once). */
function neighbourItem(env: string, name: string, edges: readonly GraphEdge[], graph: GraphReport): Html {
  const node = graph.nodes.find((n) => n.name === name);
  const reasons = [...new Set(edges.map(edgeReason))];
  return html`<li data-unit="${name}"><a class="unit" href="${unitHref(env, name)}">${name}</a> ${node ? badge(node.state) : ''} <span class="muted">${reasons.join('; ')}</span></li>`;
}

/** The units on one side of this one in the graph, grouped by neighbour, in the graph's order. */
function neighbourList(env: string, unit: string, graph: GraphReport, side: 'dependencies' | 'dependents', empty: string): Html {
  const [mine, theirs] = side === 'dependencies' ? (['to', 'from'] as const) : (['from', 'to'] as const);
  const edges = graph.edges.filter((e) => e[mine] === unit);
  const names = graph.nodes.map((n) => n.name).filter((n) => edges.some((e) => e[theirs] === n));
  if (names.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<ul class="neighbours ${side}">${names.map((n) =>
    neighbourItem(
      env,
      n,
      edges.filter((e) => e[theirs] === n),
      graph,
    ),
  )}</ul>`;
}

/** What the unit waits for and what waits for it, as links (the graph drawn on the environment's page, for one unit). */
function neighboursSection(env: string, unit: string, graph: GraphReport): Html {
  return html`<section class="neighbours"><div><h2>Depends on</h2>${neighbourList(env, unit, graph, 'dependencies', 'Nothing: it runs first.')}</div><div><h2>Dependents</h2>${neighbourList(env, unit, graph, 'dependents', 'Nothing depends on it.')}</div></section>`;
}

function driftSection(u: UnitStatus | undefined): Html {
  const d = u?.drift;
  if (!d) return html``;
  return html`<section><h2>Drift</h2>${fields([
    ['Status', badge(d.status)],
    ['Observed', time(d.observedAt)],
    ['By run', d.run],
    ['Detail', d.detail],
  ])}</section>`;
}

function outputsTable(show: ShowReport): Html {
  const r = show.receipt!;
  const plain = Object.entries(r.outputs).map(([k, v]) => html`<tr data-output="${k}"><th>${k}</th><td><pre class="value">${valueText(v)}</pre></td></tr>`);
  // Neither the value nor its digest: a page is read by more people than state is.
  const sealed = Object.keys(r.sensitiveOutputs ?? {}).map(
    (k) => html`<tr data-output="${k}" class="sensitive"><th>${k}</th><td><span class="masked">\u2022\u2022\u2022\u2022\u2022\u2022</span> sensitive</td></tr>`,
  );
  if (plain.length + sealed.length === 0) return html`<p class="empty">No outputs.</p>`;
  return html`<table class="outputs"><tbody>${plain}${sealed}</tbody></table>`;
}

function receiptSection(env: string, show: ShowReport): Html {
  const r = show.receipt;
  if (!r) return html`<section><h2>Receipt</h2><p class="empty">No receipt: the unit has not executed to the end yet.</p></section>`;
  return html`<section class="receipt"><h2>Receipt</h2>${fields([
    ['Run', html`<a class="run" href="${runHref(env, r.run)}">${r.run}</a>`],
    ['Execution key', html`<code>${r.executionKey}</code>`],
    ['Finished', time(r.finishedAt)],
  ])}<h3>Outputs</h3>${outputsTable(show)}</section>`;
}

/**
 * A document without the digests of sensitive values (a receipt's `sensitiveOutputs`, a
 * consumer's `reads.secrets`): a page is read by more people than state is, and a digest of the
 * first state format is a plain hash that a word list can be tried against.
 */
function withoutDigests(doc: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(doc);
  const receipt = copy.receipt as { sensitiveOutputs?: unknown } | undefined;
  const sensitive = receipt?.sensitiveOutputs;
  if (sensitive && typeof sensitive === 'object') for (const name of Object.keys(sensitive)) (sensitive as Record<string, unknown>)[name] = '(sensitive)';
  const secrets = (copy.reads as { secrets?: unknown } | undefined)?.secrets;
  if (Array.isArray(secrets)) for (const read of secrets) if (read && typeof read === 'object') delete (read as Record<string, unknown>).sha256;
  return copy;
}

function documentsSection(show: ShowReport): Html {
  const doc = (title: string, value: Record<string, unknown> | undefined) =>
    value ? html`<details><summary>${title}</summary><pre class="document">${JSON.stringify(withoutDigests(value), null, 2)}</pre></details>` : '';
  return html`<section><h2>Documents</h2>${doc('Desired document', show.desiredDocument)}${doc('Observed document', show.observedDocument)}</section>`;
}

export function unitPageOf(data: UnitPageData, live: Live | undefined): Html {
  const { status, show, graph } = data;
  const env = status.environment;
  const u = status.units[show.unit];
  const body = html`<h1>${show.unit} ${u ? html`<span class="muted">${u.kind}</span> ${badge(u.state)}` : ''}</h1>
${diagnostics([...show.errors, ...show.warnings])}
${u ? html`<section class="state"><h2>State</h2><p>${whyOf(env, u)}</p></section>` : ''}
${conditionSection(env, u, show)}
${neighboursSection(env, show.unit, graph)}
${driftSection(u)}
${receiptSection(env, show)}
<section><h2>Latest operations</h2>${entryList(env, show.lastRuns)}</section>
${documentsSection(show)}`;
  return page({
    title: `${show.unit} in ${env}`,
    crumbs: [
      [env, environmentHref(env)],
      [show.unit, unitHref(env, show.unit)],
    ],
    live,
    body,
  });
}
