/**
 * `nyl graph -e ENV`: the dependency graph of an environment's units, each node with its state
 * as `nyl status` resolves it (the same planner run: current, pending, failed, held, uncertain,
 * blocked, ...). Read only, like status: no lease, nothing written.
 *
 * Edges run from a dependency to the unit that depends on it (network -> database: network runs
 * first), one per reason: an explicit `dependsOn`, a `triggers` entry, or a
 * `${{ units.X.outputs.K }}` reference, with the pointer inside the consumer's spec where it
 * stands (project/graph.ts, unitEdges). Units that state holds but that left the ownership set
 * are nodes without edges: source no longer says what they depend on.
 */
import { ownershipSet } from '../../project/selectors';
import { unitEdges } from '../../project/graph';
import type { GraphNode, GraphReport, StatusReport } from '../../report/types';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from '../shared/context';
import { statusOpened } from './status';

export async function graph(rt: Runtime, req: EnvironmentRequest): Promise<GraphReport> {
  const opened = await openEnvironment(rt, req, { writes: false });
  try {
    return await graphOpened(rt, opened);
  } finally {
    opened.close();
  }
}

async function graphOpened(rt: Runtime, opened: OpenedEnvironment): Promise<GraphReport> {
  return graphOf(opened, await statusOpened(rt, opened));
}

/** The graph of an environment whose status was just read (the web view reads both at once). */
export function graphOf(opened: OpenedEnvironment, status: StatusReport): GraphReport {
  const nodes: GraphNode[] = status.unitOrder.map((name) => {
    const u = status.units[name]!;
    return { name, kind: u.kind, state: u.state, detail: u.detail };
  });
  const shown = new Set(nodes.map((n) => n.name));
  const owned = ownershipSet(opened.project, opened.env).filter((u) => shown.has(u.name));
  const { apiVersion, formatVersion, environment, errors, warnings, notes, details } = status;
  return { apiVersion, formatVersion, kind: 'GraphReport', operation: 'graph', environment, nodes, edges: unitEdges(owned), errors, warnings, notes, details };
}
