/**
 * How an edge of `nyl graph`'s report is said in words, the same in every drawing of it: the
 * text tree, DOT and Mermaid of the CLI, and the web view's SVG. Pure.
 */
import type { GraphEdge } from './types';

/** Why `edge.to` waits for `edge.from`, as a reader says it. */
export function edgeReason(edge: GraphEdge): string {
  if (edge.via === 'reference') return `outputs.${edge.output} at ${edge.pointer}`;
  return edge.via === 'trigger' ? 'triggers' : 'dependsOn';
}
