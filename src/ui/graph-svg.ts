/**
 * An environment's dependency graph (`nyl graph`'s report) drawn as inline SVG for `nyl ui`:
 * rendered on the server, so the page needs no script and no front-end library, and a read-only
 * view stays a plain document under a strict Content-Security-Policy (no inline style either:
 * presentation comes from GRAPH_CSS, by class).
 *
 * The layout is a small layered (Sugiyama-style) drawing, left to right: a unit's column is the
 * longest path to it from a unit that depends on nothing, so every edge points rightwards and the
 * picture reads in the order units run, like the `nyl graph` tree. A link that spans several
 * columns gets a dummy vertex in each column it crosses: a thin lane that takes a slot in that
 * column like a unit does, so the ordering makes room for it and the link never runs behind a unit
 * it does not join. Within a column, units start in the report's dependency order (dummies after
 * them, in link order) and a few barycenter sweeps move each vertex towards its neighbours to
 * untangle crossings. Heights are then assigned, not stacked: each vertex moves towards the mean
 * height of its neighbours as far as its column's order allows (a lane pulls harder), so a long
 * link's lanes line up and it runs straight instead of looping round the columns it crosses. A
 * link is drawn as one path: from its port on the dependency's right side, a cubic with horizontal
 * tangents across each gap between columns, a straight horizontal run through each of its lanes,
 * the arrowhead at its port on the dependent's left side. The links of one side of a unit spread
 * over that side, ordered by where they go, so that a unit with ten edges shows ten. Everything
 * is deterministic and rounded, so the same report gives the same bytes. A graph library would
 * buy better routing, but the graphs are small and the page must stay dependency-free. The
 * highlight of a unit's edges on hover and focus is the page's script (assets.ts), by class.
 */
import { edgeReason } from '../report/graph-edge';
import type { GraphEdge, GraphNode, GraphReport } from '../report/types';
import { html, join, type Html } from './html';

const NODE_WIDTH = 208;
const NODE_HEIGHT = 48;
/** Room between columns for the curves and the arrowhead. */
const COLUMN_GAP = 64;
const ROW_GAP = 20;
/** The slot a dummy vertex takes in its column: a lane for a link passing through, thinner than a unit. */
const LANE_HEIGHT = 8;
/** Dummy vertices' ids start with a character no unit name has (names are [a-z0-9-], and never hold a NUL). */
const DUMMY_PREFIX = '\u0000';
const MARGIN = 8;
const CORNER_RADIUS = 6;
const TEXT_INSET = 10;
/** Beyond these lengths a label is cut with an ellipsis so it stays inside its box (the <title> has it whole). */
const MAX_NAME_CHARS = 22;
const MAX_STATE_CHARS = 34;
/** Down-and-up barycenter sweeps: a few are enough for graphs of tens of units. */
const ORDERING_SWEEPS = 4;
const ARROW_ID = 'nyl-arrow';

type Via = GraphEdge['via'];

/** A link between two vertices (units or dummies) in adjacent columns; also what reads only a link's two ends takes. */
interface Segment {
  from: string;
  to: string;
}

/** All edges between one pair of units, drawn as one path. */
interface Link extends Segment {
  vias: Via[];
  reasons: string[];
}

/** The top left corner of a vertex's slot: a unit's box, or a dummy's lane. */
interface Box {
  x: number;
  y: number;
}

interface Point {
  x: number;
  y: number;
}

/** The columns with their dummies, the segments between adjacent columns, and each long link's dummies, left to right. */
interface Layered {
  columns: string[][];
  segments: Segment[];
  lanes: Map<Link, string[]>;
}

interface Layout {
  boxes: Map<string, Box>;
  lanes: Map<Link, string[]>;
  /** Where each link leaves its dependency (`out`) and enters its dependent (`in`): the y of its end on that side. */
  ports: Map<Link, { out: number; in: number }>;
  width: number;
  height: number;
}

/** One decimal: enough for a drawing, and stable text across platforms. */
function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Cut to `max` characters (code points, never half a surrogate pair), the last one an ellipsis. */
function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}\u2026`;
}

/** The report's edges merged per pair, in order of first appearance; edges to unknown units are left out. */
function linksOf(edges: readonly GraphEdge[], names: ReadonlySet<string>): Link[] {
  const byPair = new Map<string, Map<string, Link>>();
  const links: Link[] = [];
  for (const edge of edges) {
    if (!names.has(edge.from) || !names.has(edge.to)) continue;
    const fromLinks = byPair.get(edge.from) ?? new Map<string, Link>();
    byPair.set(edge.from, fromLinks);
    let link = fromLinks.get(edge.to);
    if (!link) {
      link = { from: edge.from, to: edge.to, vias: [], reasons: [] };
      fromLinks.set(edge.to, link);
      links.push(link);
    }
    link.vias.push(edge.via);
    link.reasons.push(edgeReason(edge));
  }
  return links;
}

/** For each vertex, the links on one side of it (its dependencies' or its dependents'). */
function linksBy<T extends Segment>(names: readonly string[], links: readonly T[], end: 'from' | 'to'): Map<string, T[]> {
  const by = new Map<string, T[]>(names.map((name) => [name, []]));
  for (const link of links) by.get(link[end])!.push(link);
  return by;
}

/**
 * The links without the back edges a depth-first search meets (self-loops included). Validation
 * refuses cycles, but a cycle here must not hang the page: without back edges the rest is a DAG.
 * Iterative, so a long chain of units cannot overflow the stack.
 */
function withoutBackEdges(names: readonly string[], links: readonly Link[]): Link[] {
  const outgoing = linksBy(names, links, 'from');
  const visit = new Map<string, 'open' | 'done'>();
  const back = new Set<Link>();
  for (const root of names) {
    if (visit.has(root)) continue;
    visit.set(root, 'open');
    const stack = [{ name: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const link = outgoing.get(top.name)![top.next++];
      if (!link) {
        visit.set(top.name, 'done');
        stack.pop();
      } else if (visit.get(link.to) === 'open') {
        back.add(link);
      } else if (!visit.has(link.to)) {
        visit.set(link.to, 'open');
        stack.push({ name: link.to, next: 0 });
      }
    }
  }
  return links.filter((link) => !back.has(link));
}

/** Each unit's column: the longest path to it from a unit with no dependency (those are column 0). */
function columnsOf(names: readonly string[], dag: readonly Link[]): Map<string, number> {
  const column = new Map<string, number>(names.map((name) => [name, 0]));
  const waitingFor = new Map<string, number>(names.map((name) => [name, 0]));
  for (const link of dag) waitingFor.set(link.to, waitingFor.get(link.to)! + 1);
  const outgoing = linksBy(names, dag, 'from');
  const ready = names.filter((name) => waitingFor.get(name) === 0);
  // Kahn's order: a unit is placed once all its dependencies are, so its column is final.
  for (let i = 0; i < ready.length; i++) {
    const name = ready[i]!;
    for (const link of outgoing.get(name)!) {
      column.set(link.to, Math.max(column.get(link.to)!, column.get(name)! + 1));
      waitingFor.set(link.to, waitingFor.get(link.to)! - 1);
      if (waitingFor.get(link.to) === 0) ready.push(link.to);
    }
  }
  return column;
}

/** The columns as lists, each in the report's order. */
function groupByColumn(names: readonly string[], column: ReadonlyMap<string, number>): string[][] {
  const count = Math.max(...names.map((name) => column.get(name)!)) + 1;
  const columns: string[][] = Array.from({ length: count }, () => []);
  for (const name of names) columns[column.get(name)!]!.push(name);
  return columns;
}

const isDummy = (id: string): boolean => id.startsWith(DUMMY_PREFIX);

/**
 * Each link of the DAG that spans more than one column cut into one segment per gap, through a
 * dummy appended to each column it crosses; a link between adjacent columns is its own segment.
 */
function withDummies(columns: readonly string[][], dag: readonly Link[], column: ReadonlyMap<string, number>): Layered {
  const layered = columns.map((names) => [...names]);
  const segments: Segment[] = [];
  const lanes = new Map<Link, string[]>();
  dag.forEach((link, index) => {
    const chain = [link.from];
    for (let c = column.get(link.from)! + 1; c < column.get(link.to)!; c++) {
      const dummy = `${DUMMY_PREFIX}${index}:${c}`;
      layered[c]!.push(dummy);
      chain.push(dummy);
    }
    chain.push(link.to);
    for (let i = 1; i < chain.length; i++) segments.push({ from: chain[i - 1]!, to: chain[i]! });
    if (chain.length > 2) lanes.set(link, chain.slice(1, -1));
  });
  return { columns: layered, segments, lanes };
}

/** Record each unit's row relative to its column's middle: columns are drawn vertically centred, so rows compare across columns. */
function setCentredRows(rows: Map<string, number>, names: readonly string[]): void {
  names.forEach((name, i) => rows.set(name, i - (names.length - 1) / 2));
}

function centredRows(columns: readonly string[][]): Map<string, number> {
  const rows = new Map<string, number>();
  for (const names of columns) setCentredRows(rows, names);
  return rows;
}

/** A column reordered by the mean row of each vertex's neighbours; a vertex without any keeps its row, ties keep the order. */
function byBarycenter(names: readonly string[], neighbours: (name: string) => string[], rows: ReadonlyMap<string, number>): string[] {
  const key = (name: string): number => {
    const around = neighbours(name);
    if (around.length === 0) return rows.get(name)!;
    return around.reduce((sum, other) => sum + rows.get(other)!, 0) / around.length;
  };
  const keyed = names.map((name, index) => ({ name, index, key: key(name) }));
  keyed.sort((a, b) => a.key - b.key || a.index - b.index);
  return keyed.map((k) => k.name);
}

/** One sweep over the columns, left to right by dependencies or right to left by dependents. */
function sweep(columns: readonly string[][], neighbours: (name: string) => string[], direction: 'down' | 'up'): string[][] {
  const next = columns.map((names) => [...names]);
  const rows = centredRows(next);
  const order = next.map((_, i) => i);
  if (direction === 'up') order.reverse();
  for (const i of order.slice(1)) {
    next[i] = byBarycenter(next[i]!, neighbours, rows);
    setCentredRows(rows, next[i]!);
  }
  return next;
}

/** The pairs i < j with values[i] > values[j], counted by a merge sort (which sorts `values`), so thousands of dummies stay cheap. */
function inversions(values: number[]): number {
  if (values.length < 2) return 0;
  const left = values.slice(0, values.length >> 1);
  const right = values.slice(left.length);
  let count = inversions(left) + inversions(right);
  let [i, j] = [0, 0];
  for (let k = 0; k < values.length; k++) {
    if (j >= right.length || (i < left.length && left[i]! <= right[j]!)) {
      values[k] = left[i++]!;
    } else {
      values[k] = right[j++]!;
      count += left.length - i;
    }
  }
  return count;
}

/** Crossings between segments of the same gap between columns: the measure the sweeps must not make worse. */
function crossings(columns: readonly string[][], segments: readonly Segment[]): number {
  const rows = centredRows(columns);
  const gapOf = new Map<string, number>();
  columns.forEach((ids, c) => ids.forEach((id) => gapOf.set(id, c)));
  const byGap = new Map<number, Segment[]>();
  for (const segment of segments) {
    const gap = gapOf.get(segment.from)!;
    const group = byGap.get(gap) ?? [];
    byGap.set(gap, group);
    group.push(segment);
  }
  let count = 0;
  for (const group of byGap.values()) {
    // Two segments cross when their ends are in opposite orders: sorted by both ends, the pairs whose right ends are inverted.
    const ends = group.map((segment) => [rows.get(segment.from)!, rows.get(segment.to)!] as const);
    ends.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    count += inversions(ends.map((end) => end[1]));
  }
  return count;
}

/** The columns after a few down and up sweeps, keeping the best order seen (a later tie wins: it is the settled one). */
function orderColumns({ columns, segments }: Layered): string[][] {
  const ids = columns.flat();
  const dependencies = linksBy(ids, segments, 'to');
  const dependents = linksBy(ids, segments, 'from');
  const before = (id: string): string[] => dependencies.get(id)!.map((segment) => segment.from);
  const after = (id: string): string[] => dependents.get(id)!.map((segment) => segment.to);
  let best = columns;
  let fewest = crossings(best, segments);
  let current = columns;
  for (let i = 0; i < ORDERING_SWEEPS; i++) {
    for (const [neighbours, direction] of [
      [before, 'down'],
      [after, 'up'],
    ] as const) {
      current = sweep(current, neighbours, direction);
      const count = crossings(current, segments);
      if (count <= fewest) [best, fewest] = [current, count];
    }
  }
  return best;
}

/** A vertex's slot height: a unit's box, or a dummy's lane. */
const slotHeight = (id: string): number => (isDummy(id) ? LANE_HEIGHT : NODE_HEIGHT);

function columnHeight(ids: readonly string[]): number {
  return ids.reduce((sum, id) => sum + slotHeight(id), 0) + (ids.length - 1) * ROW_GAP;
}

/** Rounds of moving every vertex towards its neighbours: enough for a long link's lanes to line up. */
const STRAIGHTENING_ROUNDS = 24;
/** A lane pulls harder towards its neighbours than a unit does: a long link drawn straight reads best. */
const LANE_WEIGHT = 8;
/** The most room between two ports on one side of a unit, and what is kept clear at its corners. */
const PORT_STEP = 8;
const PORT_INSET = 6;

/**
 * One column's centres as close as its order allows to where each vertex wants to be: each
 * centre at least half of both slots and a ROW_GAP below the one above. With each centre measured
 * from its place in a tight stack, the order is a plain "non-decreasing" constraint, and the
 * closest weighted fit is found by pooling adjacent violators (isotonic regression).
 */
function packColumn(ids: readonly string[], wanted: ReadonlyMap<string, number>, centres: Map<string, number>): void {
  const offsets: number[] = [];
  ids.forEach((id, i) => offsets.push(i === 0 ? 0 : offsets[i - 1]! + (slotHeight(ids[i - 1]!) + slotHeight(id)) / 2 + ROW_GAP));
  const blocks: { sum: number; weight: number; count: number }[] = [];
  ids.forEach((id, i) => {
    const weight = isDummy(id) ? LANE_WEIGHT : 1;
    blocks.push({ sum: weight * (wanted.get(id)! - offsets[i]!), weight, count: 1 });
    while (
      blocks.length > 1 &&
      blocks[blocks.length - 2]!.sum / blocks[blocks.length - 2]!.weight > blocks[blocks.length - 1]!.sum / blocks[blocks.length - 1]!.weight
    ) {
      const last = blocks.pop()!;
      const before = blocks[blocks.length - 1]!;
      Object.assign(before, { sum: before.sum + last.sum, weight: before.weight + last.weight, count: before.count + last.count });
    }
  });
  let i = 0;
  for (const block of blocks) for (let k = 0; k < block.count; k++, i++) centres.set(ids[i]!, block.sum / block.weight + offsets[i]!);
}

/**
 * Each vertex's vertical centre: columns start as centred stacks, then each vertex moves towards
 * the mean of its neighbours' centres, column by column, alternately left to right and back. A
 * long link's lanes line up with its ends, so it runs straight instead of around the column.
 */
function centresOf(columns: readonly string[][], segments: readonly Segment[]): Map<string, number> {
  const tallest = Math.max(...columns.map(columnHeight));
  const centres = new Map<string, number>();
  for (const ids of columns) {
    let top = (tallest - columnHeight(ids)) / 2;
    for (const id of ids) {
      centres.set(id, top + slotHeight(id) / 2);
      top += slotHeight(id) + ROW_GAP;
    }
  }
  const ids = columns.flat();
  const around = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const { from, to } of segments) around.get(from)!.push(to), around.get(to)!.push(from);
  for (let round = 0; round < STRAIGHTENING_ROUNDS; round++) {
    const order = round % 2 === 0 ? columns : [...columns].reverse();
    for (const column of order) {
      const wanted = new Map<string, number>();
      for (const id of column) {
        const others = around.get(id)!;
        wanted.set(id, others.length === 0 ? centres.get(id)! : others.reduce((sum, o) => sum + centres.get(o)!, 0) / others.length);
      }
      packColumn(column, wanted, centres);
    }
  }
  return centres;
}

/** Slots in columns, one column per layer, each at its centre (centresOf), the whole moved to the margin. */
function place(columns: readonly string[][], { segments, lanes }: Layered): Layout {
  const centres = centresOf(columns, segments);
  const tops = new Map([...centres].map(([id, centre]) => [id, centre - slotHeight(id) / 2]));
  const highest = Math.min(...tops.values());
  const lowest = Math.max(...[...tops].map(([id, top]) => top + slotHeight(id)));
  const boxes = new Map<string, Box>();
  columns.forEach((ids, c) => {
    const x = round(MARGIN + c * (NODE_WIDTH + COLUMN_GAP));
    for (const id of ids) boxes.set(id, { x, y: round(MARGIN + tops.get(id)! - highest) });
  });
  const width = 2 * MARGIN + columns.length * NODE_WIDTH + (columns.length - 1) * COLUMN_GAP;
  return { boxes, lanes, width: round(width), height: round(2 * MARGIN + lowest - highest), ports: new Map() };
}

/** Where every unit and every dummy goes, and where each link leaves and enters its units. */
function layout(nodes: readonly GraphNode[], links: readonly Link[]): Layout {
  const names = nodes.map((node) => node.name);
  const dag = withoutBackEdges(names, links);
  const column = columnsOf(names, dag);
  const layered = withDummies(groupByColumn(names, column), dag, column);
  const placed = place(orderColumns(layered), layered);
  return { ...placed, ports: portsOf(links, placed) };
}

/** The centre of a vertex's slot. */
function centreOf(id: string, boxes: ReadonlyMap<string, Box>): number {
  return boxes.get(id)!.y + slotHeight(id) / 2;
}

/**
 * Where each link leaves its dependency and enters its dependent: the links on one side of a unit
 * spread over that side, ordered by where their next vertex (a lane, or the unit at the other end)
 * is, so that they fan out without crossing at the box; one link alone stays at the middle.
 */
function portsOf(links: readonly Link[], { boxes, lanes }: Omit<Layout, 'ports'>): Map<Link, { out: number; in: number }> {
  const ports = new Map(links.map((link) => [link, { out: 0, in: 0 }]));
  const next = (link: Link) => centreOf(lanes.get(link)?.[0] ?? link.to, boxes);
  const previous = (link: Link) => centreOf(lanes.get(link)?.at(-1) ?? link.from, boxes);
  const spread = (unit: string, side: Link[], key: (link: Link) => number, set: (link: Link, y: number) => void) => {
    const sorted = side.map((link, index) => ({ link, index, key: key(link) })).sort((a, b) => a.key - b.key || a.index - b.index);
    const step = Math.min(PORT_STEP, (NODE_HEIGHT - 2 * PORT_INSET) / Math.max(1, sorted.length - 1));
    sorted.forEach(({ link }, i) => set(link, centreOf(unit, boxes) + (i - (sorted.length - 1) / 2) * step));
  };
  for (const [unit, side] of linksBy(
    [...boxes.keys()].filter((id) => !isDummy(id)),
    links,
    'from',
  ))
    spread(unit, side, next, (link, y) => (ports.get(link)!.out = y));
  for (const [unit, side] of linksBy(
    [...boxes.keys()].filter((id) => !isDummy(id)),
    links,
    'to',
  ))
    spread(unit, side, previous, (link, y) => (ports.get(link)!.in = y));
  return ports;
}

/**
 * Where a link's path goes: from its port on the right of the dependency, in and out of each of
 * its lanes (the left and right end of the lane's middle line), to its port on the left of the dependent.
 */
function routeOf(link: Link, { boxes, lanes, ports }: Layout): Point[] {
  const [from, to] = [boxes.get(link.from)!, boxes.get(link.to)!];
  const port = ports.get(link)!;
  const route: Point[] = [{ x: from.x + NODE_WIDTH, y: port.out }];
  for (const id of lanes.get(link) ?? []) {
    const lane = boxes.get(id)!;
    const y = lane.y + LANE_HEIGHT / 2;
    route.push({ x: lane.x, y }, { x: lane.x + NODE_WIDTH, y });
  }
  route.push({ x: to.x, y: port.in });
  return route;
}

const xy = (point: Point): string => `${round(point.x)} ${round(point.y)}`;

/** A cubic Bézier with horizontal tangents at both ends; a backward link (only from a cycle) still bulges outwards. */
function curveTo(from: Point, to: Point): string {
  const bend = Math.max(Math.abs(to.x - from.x) / 2, COLUMN_GAP / 2);
  return `C${xy({ x: from.x + bend, y: from.y })} ${xy({ x: to.x - bend, y: to.y })} ${xy(to)}`;
}

/** One path along a route: a curve across each gap between columns, a straight line along each lane. */
function edgePath(route: readonly Point[]): string {
  const parts = [`M${xy(route[0]!)}`];
  for (let i = 1; i < route.length; i++) parts.push(i % 2 === 1 ? curveTo(route[i - 1]!, route[i]!) : `L${xy(route[i]!)}`);
  return parts.join(' ');
}

function edgeMarkup(link: Link, layout: Layout): Html {
  const via = link.vias.includes('reference') ? 'reference' : link.vias[0]!;
  const d = edgePath(routeOf(link, layout));
  const title = `${link.from} \u2192 ${link.to}: ${link.reasons.join('; ')}`;
  return html`<path class="edge via-${via}" data-from="${link.from}" data-to="${link.to}" d="${d}" marker-end="url(#${ARROW_ID})"><title>${title}</title></path>`;
}

function nodeMarkup(node: GraphNode, box: Box, unitHref: (unit: string) => string): Html {
  const summary = `${node.kind} \u00b7 ${node.state}`;
  const title = [node.name, summary, node.detail].filter((line) => line !== '').join('\n');
  const textX = round(box.x + TEXT_INSET);
  return html`<a href="${unitHref(node.name)}" class="node state-${node.state}" data-unit="${node.name}"><title>${title}</title><rect x="${box.x}" y="${box.y}" width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="${CORNER_RADIUS}"/><text class="node-name" x="${textX}" y="${round(box.y + 20)}">${truncate(node.name, MAX_NAME_CHARS)}</text><text class="node-state" x="${textX}" y="${round(box.y + 37)}">${truncate(summary, MAX_STATE_CHARS)}</text></a>`;
}

/** The arrowhead every edge ends with, defined once. */
function arrowDefinition(): Html {
  return html`<defs><marker id="${ARROW_ID}" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path class="arrowhead" d="M0 0L10 5L0 10z"/></marker></defs>`;
}

/** The graph as an inline <svg>; each node links to unitHref(name). */
export function graphSvg(report: Pick<GraphReport, 'nodes' | 'edges' | 'environment'>, unitHref: (unit: string) => string): Html {
  if (report.nodes.length === 0) return html`<p class="empty">No units.</p>`;
  const links = linksOf(report.edges, new Set(report.nodes.map((node) => node.name)));
  const drawing = layout(report.nodes, links);
  const { boxes, width, height } = drawing;
  // Edges first, so the boxes sit on top of the ends of the curves.
  const edges = links.map((link) => edgeMarkup(link, drawing));
  const nodes = report.nodes.map((node) => nodeMarkup(node, boxes.get(node.name)!, unitHref));
  return html`<svg class="graph" role="img" aria-label="Dependency graph of ${report.environment}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${arrowDefinition()}<g class="edges">${join(edges)}</g><g class="nodes">${join(nodes)}</g></svg>`;
}

/** A short sample of an edge of one kind, for the legend: drawn by the same classes as the graph's. */
function edgeSample(via: Via): Html {
  return html`<svg class="graph graph-key" width="40" height="10" viewBox="0 0 40 10" aria-hidden="true"><path class="edge via-${via}" d="M1 5H39"/></svg>`;
}

/**
 * What the drawing's lines and colours mean, under it: an edge's kind by its dash (why the
 * dependent waits), a unit's state by its outline, and that pointing at a unit highlights its edges.
 */
export function graphLegend(): Html {
  const item = (sample: Html, text: string) => html`<li>${sample} ${text}</li>`;
  const box = (state: string) =>
    html`<svg class="graph graph-key" width="18" height="12" viewBox="0 0 18 12" aria-hidden="true"><g class="node state-${state}"><rect x="1" y="1" width="16" height="10" rx="2"/></g></svg>`;
  return html`<ul class="graph-legend" aria-label="Legend of the graph">${[
    item(edgeSample('dependsOn'), 'dependsOn'),
    item(edgeSample('reference'), 'reads an output'),
    item(edgeSample('trigger'), 'triggers'),
    item(box('current'), 'current'),
    item(box('pending'), 'waiting or held'),
    item(box('failed'), 'failed or uncertain'),
    html`<li class="muted">Point at or tab to a unit: its dependencies' edges turn blue, its dependents' purple.</li>`,
  ]}</ul>`;
}

/** CSS for the drawing (classes above), appended to the page's stylesheet by the caller. */
export const GRAPH_CSS = `
/* Drawn at its own size: the box around it scrolls rather than shrinking the labels to nothing. */
.graph { display: block; max-width: none; font-family: inherit; }
.graph.graph-key { display: inline-block; vertical-align: middle; }
.graph a.node, .graph a.node:hover { text-decoration: none; }
.graph text { font-family: inherit; }
.graph .node rect { fill: #ffffff; stroke: #8c959f; stroke-width: 1.5; }
.graph .node:hover rect, .graph .node:focus-visible rect { stroke-width: 3; }
.graph .node-name { font-size: 13px; font-weight: 600; fill: #1f2328; }
.graph .node-state { font-size: 11px; fill: #57606a; }
.graph .state-current rect { stroke: #2da44e; fill: #f0fbf3; }
.graph .state-failed rect, .graph .state-uncertain rect { stroke: #cf222e; fill: #fff1f0; }
.graph .state-pending rect, .graph .state-outdated rect, .graph .state-awaiting-dependencies rect,
.graph .state-blocked rect, .graph .state-held rect, .graph .state-awaiting-approval rect,
.graph .state-drifted rect, .graph .state-running rect, .graph .state-pending-teardown rect,
.graph .state-tearing-down rect, .graph .state-leaving rect { stroke: #bf8700; fill: #fff8e5; }
.graph .state-retained rect, .graph .state-released rect { stroke: #8c959f; fill: #f6f8fa; }
.graph .state-retained .node-name, .graph .state-released .node-name { fill: #57606a; }
.graph .edge { fill: none; stroke: #8c959f; stroke-width: 1.5; }
.graph .edge:hover { stroke-width: 3; }
.graph.focused .edge { opacity: 0.12; }
.graph.focused .node { opacity: 0.4; }
.graph.focused .node.near, .graph.focused .node.focus { opacity: 1; }
.graph.focused .node.focus rect { stroke-width: 3; }
.graph.focused .edge.into, .graph.focused .edge.out-of { opacity: 1; stroke-width: 2.5; }
.graph.focused .edge.into { stroke: #1f6feb; }
.graph.focused .edge.out-of { stroke: #8250df; }
.graph .edge.via-reference { stroke: #6e7781; stroke-dasharray: 6 3; }
.graph .edge.via-trigger { stroke-dasharray: 2 3; }
.graph .arrowhead { fill: #8c959f; fill: context-stroke; }
@media (prefers-color-scheme: dark) {
  .graph .node rect { fill: #161b22; stroke: #6e7681; }
  .graph .node-name { fill: #e6edf3; }
  .graph .node-state { fill: #9198a1; }
  .graph .state-current rect { stroke: #3fb950; fill: #12261e; }
  .graph .state-failed rect, .graph .state-uncertain rect { stroke: #f85149; fill: #2d1416; }
  .graph .state-pending rect, .graph .state-outdated rect, .graph .state-awaiting-dependencies rect,
  .graph .state-blocked rect, .graph .state-held rect, .graph .state-awaiting-approval rect,
  .graph .state-drifted rect, .graph .state-running rect, .graph .state-pending-teardown rect,
  .graph .state-tearing-down rect, .graph .state-leaving rect { stroke: #d29922; fill: #2b2111; }
  .graph .state-retained rect, .graph .state-released rect { stroke: #6e7681; fill: #1c2128; }
  .graph .state-retained .node-name, .graph .state-released .node-name { fill: #9198a1; }
  .graph .edge { stroke: #6e7681; }
  .graph .edge.via-reference { stroke: #8b949e; }
  .graph .arrowhead { fill: #6e7681; fill: context-stroke; }
}
`;
