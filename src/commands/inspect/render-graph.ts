/**
 * `nyl graph` as text (an indented tree), Graphviz DOT and Mermaid. Pure: a GraphReport in, text
 * out. Every edge points from a dependency to the unit that depends on it, so the tree and the
 * drawings read in the order units run.
 *
 * The tree starts at the units that depend on nothing, in the report's order (dependency order,
 * ties by name). A unit with several dependencies is written in full under the first of them and
 * as `name (see above)` under the others: a graph, not a tree, would otherwise repeat whole
 * subtrees (exponentially, in the worst case).
 */
import { edgeReason } from '../../report/graph-edge';
import type { GraphNode, GraphReport } from '../../report/types';
import { withDiagnostics } from '../text/render';

/** The reasons of each dependent of each unit: from -> to -> reasons, in node order. */
function childrenOf(report: GraphReport): Map<string, Map<string, string[]>> {
  const rank = new Map(report.nodes.map((n, i) => [n.name, i]));
  const children = new Map<string, Map<string, string[]>>();
  const sorted = [...report.edges].sort((a, b) => rank.get(a.to)! - rank.get(b.to)!);
  for (const e of sorted) {
    const of = children.get(e.from) ?? new Map<string, string[]>();
    children.set(e.from, of);
    of.set(e.to, [...(of.get(e.to) ?? []), edgeReason(e)]);
  }
  return children;
}

export function renderGraphText(report: GraphReport): string {
  const byName = new Map(report.nodes.map((n) => [n.name, n]));
  const children = childrenOf(report);
  const hasDependency = new Set(report.edges.map((e) => e.to));
  const written = new Set<string>();
  const lines: string[] = [];
  const write = (name: string, lead: string, branch: string, reasons: string[]): void => {
    const node = byName.get(name)!;
    const why = reasons.length > 0 ? `  <- ${reasons.join('; ')}` : '';
    if (written.has(name)) {
      lines.push(`${lead}${branch}${name} (see above)${why}`);
      return;
    }
    written.add(name);
    lines.push(`${lead}${branch}${name}  ${node.kind}  ${node.state}${why}`);
    const below = [...(children.get(name) ?? new Map<string, string[]>())];
    const inner = lead + (branch === '' ? '' : branch === '\u2514\u2500 ' ? '   ' : '\u2502  ');
    below.forEach(([child, why2], i) => write(child, inner, i === below.length - 1 ? '\u2514\u2500 ' : '\u251c\u2500 ', why2));
  };
  for (const node of report.nodes) if (!hasDependency.has(node.name)) write(node.name, '', '', []);
  // A cycle has no root; validation refuses cycles, but never leave a unit out.
  for (const node of report.nodes) if (!written.has(node.name)) write(node.name, '', '', []);
  const body = lines.length > 0 ? lines.join('\n') : `${report.environment}: no units`;
  return withDiagnostics(body, [...report.errors, ...report.warnings, ...report.notes]);
}

/** The colour of a state, for the drawings: what went wrong red, what waits amber, what is done green. */
function stateColour(state: string): string {
  if (state === 'failed' || state === 'uncertain') return '#d9534f';
  if (state === 'current' || state === 'retained' || state === 'released') return '#5cb85c';
  return '#f0ad4e';
}

/** A DOT quoted string: backslashes and double quotes escaped, line breaks as DOT's \n. */
function dotString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n')}"`;
}

export function renderGraphDot(report: GraphReport): string {
  const lines = [`digraph ${dotString(`nyl ${report.environment}`)} {`, '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fillcolor=white];'];
  for (const n of report.nodes)
    lines.push(`  ${dotString(n.name)} [label=${dotString(`${n.name}\n${n.kind} \u00b7 ${n.state}`)}, color=${dotString(stateColour(n.state))}, penwidth=2];`);
  for (const e of report.edges) lines.push(`  ${dotString(e.from)} -> ${dotString(e.to)} [label=${dotString(edgeReason(e))}];`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** Mermaid label text: its own entity for a double quote, and no line break but <br/>. */
function mermaidText(text: string): string {
  return text.replace(/&/g, '#amp;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;').replace(/\r?\n/g, '<br/>');
}

export function renderGraphMermaid(report: GraphReport): string {
  const id = new Map(report.nodes.map((n: GraphNode, i) => [n.name, `n${i + 1}`]));
  const lines = ['flowchart LR'];
  for (const n of report.nodes) lines.push(`  ${id.get(n.name)}["${mermaidText(n.name)}<br/>${mermaidText(`${n.kind} \u00b7 ${n.state}`)}"]`);
  for (const e of report.edges) lines.push(`  ${id.get(e.from)} -- "${mermaidText(edgeReason(e))}" --> ${id.get(e.to)}`);
  for (const n of report.nodes) lines.push(`  style ${id.get(n.name)} stroke:${stateColour(n.state)},stroke-width:2px`);
  return `${lines.join('\n')}\n`;
}
