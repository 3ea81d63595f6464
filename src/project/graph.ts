/**
 * Pure dependency-graph functions over units (or environments): anything with `dependsOn`.
 *
 * An edge `a -> b` means "a depends on b" (b runs first). Every ordering is deterministic: ties
 * are broken by name in code-unit order, never by insertion order, so that two machines compute
 * the same waves and the same execution order. Names a node depends on that are not in the graph
 * (or not in the selected subset) are ignored here; validation reports unknown names.
 */

interface DependencyNode {
  dependsOn: readonly string[];
}

type DependencyGraph = ReadonlyMap<string, DependencyNode>;

/** Dependencies first; ties broken by name ascending (Kahn with a sorted ready set). Throws on a cycle. */
export function dependencyOrder(units: DependencyGraph, names?: Iterable<string>): string[] {
  return kahn(units, subset(units, names), false);
}

/** Consumers first (the order of teardowns); ties broken by name ascending. Throws on a cycle. */
export function consumersFirstOrder(units: DependencyGraph, names?: Iterable<string>): string[] {
  return kahn(units, subset(units, names), true);
}

/**
 * Every dependency cycle, one per strongly connected component, each written as a closed path
 * starting and ending at its smallest name, e.g. `['a', 'b', 'c', 'a']` for a -> b -> c -> a.
 * The path is the shortest cycle through that name. Cycles are sorted by their first name.
 */
export function findCycles(units: DependencyGraph, names?: Iterable<string>): string[][] {
  const nodes = subset(units, names);
  const cycles: string[][] = [];
  for (const component of stronglyConnected(units, nodes)) {
    const start = [...component].sort()[0]!;
    const selfLoop = edgesOf(units, start, nodes).includes(start);
    if (component.size === 1 && !selfLoop) continue;
    cycles.push(shortestCycle(units, start, component));
  }
  return cycles.sort((a, b) => compare(a[0]!, b[0]!));
}

/** The first cycle of findCycles, or undefined when the graph is acyclic. */
export function findCycle(units: DependencyGraph, names?: Iterable<string>): string[] | undefined {
  return findCycles(units, names)[0];
}

/** Transitive consumers of the given units (not including them), sorted by name. */
export function dependentsOf(units: DependencyGraph, roots: string | Iterable<string>): string[] {
  const consumers = new Map<string, string[]>();
  for (const [name, node] of units) {
    for (const dep of new Set(node.dependsOn)) {
      const list = consumers.get(dep) ?? [];
      list.push(name);
      consumers.set(dep, list);
    }
  }
  return reach(typeof roots === 'string' ? [roots] : roots, (n) => consumers.get(n) ?? []);
}

/** Transitive dependencies of the given units (not including them) that exist in the graph, sorted by name. */
export function dependenciesOf(units: DependencyGraph, roots: string | Iterable<string>): string[] {
  return reach(typeof roots === 'string' ? [roots] : roots, (n) => (units.get(n)?.dependsOn ?? []).filter((d) => units.has(d)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function subset(units: DependencyGraph, names?: Iterable<string>): Set<string> {
  return new Set(names ?? units.keys());
}

/** Deduplicated dependencies of a node inside the node set, sorted. */
function edgesOf(units: DependencyGraph, name: string, nodes: ReadonlySet<string>): string[] {
  const deps = units.get(name)?.dependsOn ?? [];
  return [...new Set(deps)].filter((d) => nodes.has(d)).sort(compare);
}

function kahn(units: DependencyGraph, nodes: Set<string>, reverse: boolean): string[] {
  // `blockers[x]` counts what must come before x; `unblocks[y]` lists what waits for y.
  const blockers = new Map<string, number>();
  const unblocks = new Map<string, string[]>();
  for (const n of nodes) blockers.set(n, 0);
  for (const n of nodes) {
    for (const dep of edgesOf(units, n, nodes)) {
      const [before, after] = reverse ? [n, dep] : [dep, n];
      blockers.set(after, (blockers.get(after) ?? 0) + 1);
      const list = unblocks.get(before) ?? [];
      list.push(after);
      unblocks.set(before, list);
    }
  }
  const ready = [...nodes].filter((n) => blockers.get(n) === 0).sort(compare);
  const order: string[] = [];
  while (ready.length > 0) {
    const next = ready.shift()!;
    order.push(next);
    for (const after of unblocks.get(next) ?? []) {
      const left = (blockers.get(after) ?? 0) - 1;
      blockers.set(after, left);
      if (left === 0) insertSorted(ready, after);
    }
  }
  if (order.length < nodes.size) {
    const cycle = findCycle(units, nodes);
    throw new Error(`dependency cycle: ${(cycle ?? []).join(' -> ')}`);
  }
  return order;
}

function insertSorted(list: string[], value: string): void {
  let i = 0;
  while (i < list.length && compare(list[i]!, value) < 0) i++;
  list.splice(i, 0, value);
}

/** Tarjan's algorithm, iterative so that deep chains cannot overflow the stack. */
function stronglyConnected(units: DependencyGraph, nodes: Set<string>): Set<string>[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: Set<string>[] = [];
  for (const root of [...nodes].sort(compare)) {
    if (index.has(root)) continue;
    const work: { node: string; edges: string[]; next: number }[] = [];
    const visit = (n: string): void => {
      index.set(n, counter);
      low.set(n, counter);
      counter++;
      stack.push(n);
      onStack.add(n);
      work.push({ node: n, edges: edgesOf(units, n, nodes), next: 0 });
    };
    visit(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.next < frame.edges.length) {
        const dep = frame.edges[frame.next++]!;
        if (!index.has(dep)) visit(dep);
        else if (onStack.has(dep)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(dep)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = new Set<string>();
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.add(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** Breadth-first from start inside its component, back to start: the shortest such cycle. */
function shortestCycle(units: DependencyGraph, start: string, component: Set<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const dep of edgesOf(units, node, component)) {
      if (dep === start) {
        const path = [start];
        for (let n = node; n !== start; n = previous.get(n)!) path.splice(1, 0, n);
        path.push(start);
        return path;
      }
      if (!previous.has(dep)) {
        previous.set(dep, node);
        queue.push(dep);
      }
    }
  }
  return [start, start];
}

function reach(roots: Iterable<string>, next: (name: string) => readonly string[]): string[] {
  const start = new Set(roots);
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const n of next(node)) {
      if (seen.has(n) || start.has(n)) continue;
      seen.add(n);
      queue.push(n);
    }
  }
  return [...seen].sort(compare);
}

/** Why a unit waits for another: an explicit dependsOn, a trigger, or a reference to its outputs. */
interface UnitEdge {
  /** The unit that runs first (the dependency). */
  from: string;
  /** The unit that depends on it. */
  to: string;
  via: 'dependsOn' | 'trigger' | 'reference';
  /** For a reference: the output it reads, and where in the consumer's spec it stands (`/env/DB_URL`). */
  output?: string;
  pointer?: string;
}

/** The units named in a unit's `triggers`. */
export function triggersOf(unit: { spec: Record<string, unknown> }): string[] {
  const t = unit.spec.triggers;
  return Array.isArray(t) ? t.filter((n): n is string => typeof n === 'string') : [];
}

/**
 * The edges between the given units, one per reason (a unit that both declares and references
 * another has two), dependency first, in the order of the consumers and then of their spec. An
 * edge to a unit not among them is left out: it is not part of this graph.
 */
export function unitEdges(
  units: readonly {
    name: string;
    declaredDependsOn: readonly string[];
    spec: Record<string, unknown>;
    references: readonly { unit: string; output: string; pointer: string }[];
  }[],
): UnitEdge[] {
  const names = new Set(units.map((u) => u.name));
  const edges: UnitEdge[] = [];
  for (const u of units) {
    for (const d of u.declaredDependsOn) edges.push({ from: d, to: u.name, via: 'dependsOn' });
    for (const t of triggersOf(u)) edges.push({ from: t, to: u.name, via: 'trigger' });
    for (const r of u.references) edges.push({ from: r.unit, to: u.name, via: 'reference', output: r.output, pointer: r.pointer });
  }
  return edges.filter((e) => names.has(e.from) && names.has(e.to));
}
