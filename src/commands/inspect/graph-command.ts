/**
 * `nyl graph`: the dependency graph of an environment's units, each with its state: an indented
 * tree, or drawn (-o dot, -o mermaid).
 */
import type { GraphReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { ENV, LOCAL, OUTPUT } from '../options';

export const graphCommand: Command = reporting<GraphReport>({
  words: ['graph'],
  summary: "Draw the dependency graph of an environment's units, each with its state",
  usage: 'nyl graph -e <env> [-o text|dot|mermaid|json] [PATH]',
  description:
    'Each unit of the environment with its state as nyl status resolves it (current, pending, failed, held, uncertain, ...), and an edge from each unit to every unit that waits for it: ' +
    "an explicit dependsOn, a triggers entry, or a reference to its outputs (the edge names the output and where the consumer's spec reads it). " +
    'Text is an indented tree from the units that depend on nothing (a unit with several dependencies is written in full once, then as "(see above)"); ' +
    '-o dot writes Graphviz (dot -Tsvg), -o mermaid a Mermaid flowchart, -o json the GraphReport. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
  options: [
    ENV,
    LOCAL,
    {
      ...OUTPUT,
      value: '<text|dot|mermaid|json>',
      choices: ['text', 'table', 'dot', 'mermaid', 'json'],
      help: 'An indented tree, Graphviz DOT, a Mermaid flowchart, or the versioned JSON report.',
    },
  ],
  examples: ['nyl graph -e dev', 'nyl graph -e dev -o dot | dot -Tsvg > dev.svg', 'nyl graph -e dev -o mermaid'],
  report: 'GraphReport',
  async run(rt, p) {
    const { readRequestOf } = await import('../request');
    const { graph } = await import('./graph');
    return graph(rt, readRequestOf(p));
  },
  async renderer() {
    const { renderGraphDot, renderGraphMermaid, renderGraphText } = await import('./render-graph');
    return (report, output) => (output === 'dot' ? renderGraphDot(report) : output === 'mermaid' ? renderGraphMermaid(report) : renderGraphText(report));
  },
});
