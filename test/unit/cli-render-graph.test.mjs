// nyl graph's pure parts: the edges between units (project/graph.ts, unitEdges) and the three
// renderings (cli/render-graph.ts). The DOT and Mermaid texts are checked by small parsers of
// the grammar they use (every statement, quoting and id), and by Graphviz's `dot` where it is
// installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { unitEdges } from '../../dist/project/graph.js';
import { renderGraphDot, renderGraphMermaid, renderGraphText } from '../../dist/commands/inspect/render-graph.js';

const unit = (name, { dependsOn = [], triggers, references = [] } = {}) => ({
  name,
  declaredDependsOn: dependsOn,
  spec: triggers ? { triggers } : {},
  references,
});

test('unitEdges: one edge per reason, dependency first; edges to units outside the graph are left out', () => {
  const edges = unitEdges([
    unit('net'),
    unit('db', { references: [{ unit: 'net', output: 'name', pointer: '/env/NET' }] }),
    unit('app', {
      dependsOn: ['db'],
      triggers: ['net'],
      references: [
        { unit: 'db', output: 'url', pointer: '/env/DB' },
        { unit: 'gone', output: 'x', pointer: '/env/X' },
      ],
    }),
  ]);
  assert.deepEqual(edges, [
    { from: 'net', to: 'db', via: 'reference', output: 'name', pointer: '/env/NET' },
    { from: 'db', to: 'app', via: 'dependsOn' },
    { from: 'net', to: 'app', via: 'trigger' },
    { from: 'db', to: 'app', via: 'reference', output: 'url', pointer: '/env/DB' },
  ]);
});

/** A diamond (net -> db, cache -> app), a unit outside it, and names DOT and Mermaid must quote. */
function report() {
  const node = (name, state) => ({ name, kind: 'Command', state, detail: '' });
  return {
    apiVersion: 'nyl.io/v1',
    formatVersion: 1,
    kind: 'GraphReport',
    operation: 'graph',
    environment: 'dev',
    nodes: [node('net', 'current'), node('cache', 'failed'), node('db', 'held'), node('app', 'pending'), node('say "hi"', 'uncertain')],
    edges: [
      { from: 'net', to: 'cache', via: 'dependsOn' },
      { from: 'net', to: 'db', via: 'reference', output: 'name', pointer: '/env/NET' },
      { from: 'cache', to: 'app', via: 'dependsOn' },
      { from: 'db', to: 'app', via: 'reference', output: 'url', pointer: '/env/"DB"' },
      { from: 'db', to: 'app', via: 'trigger' },
    ],
    errors: [],
    warnings: [],
    notes: [],
    details: {},
  };
}

test('text: a tree from the units that depend on nothing; a unit with two dependencies in full once', () => {
  assert.equal(
    renderGraphText(report()),
    [
      'net  Command  current',
      '├─ cache  Command  failed  <- dependsOn',
      '│  └─ app  Command  pending  <- dependsOn',
      '└─ db  Command  held  <- outputs.name at /env/NET',
      '   └─ app (see above)  <- outputs.url at /env/"DB"; triggers',
      'say "hi"  Command  uncertain',
      '',
    ].join('\n'),
  );
});

/** Tokens of the DOT subset the renderer writes: ids (bare or quoted with escapes), punctuation, ->. */
function dotTokens(text) {
  const tokens = [];
  const re = /\s+|"((?:[^"\\]|\\.)*)"|(->)|([A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?)|([{}[\];,=])/gy;
  let m;
  while (re.lastIndex < text.length) {
    const at = re.lastIndex;
    m = re.exec(text);
    assert.ok(m, `DOT: cannot read ${JSON.stringify(text.slice(at, at + 30))}`);
    if (m[1] !== undefined) tokens.push({ id: m[1] });
    else if (m[2] || m[4]) tokens.push({ p: m[2] ?? m[4] });
    else if (m[3]) tokens.push({ id: m[3] });
  }
  return tokens;
}

/** Parses `digraph ID { stmt* }` (node, edge and attribute statements); returns nodes and edges. */
function parseDot(text) {
  const t = dotTokens(text);
  let i = 0;
  const expect = (p) => assert.equal(t[i++]?.p, p, `DOT: expected ${p} at token ${i - 1}`);
  const id = () => {
    assert.ok(t[i]?.id !== undefined, `DOT: expected an id at token ${i}`);
    return t[i++].id;
  };
  const attrs = () => {
    expect('[');
    while (t[i]?.p !== ']') {
      id();
      expect('=');
      id();
      if (t[i]?.p === ',') i++;
    }
    expect(']');
  };
  assert.equal(id(), 'digraph');
  id();
  expect('{');
  const nodes = new Set();
  const edges = [];
  while (t[i]?.p !== '}') {
    const first = id();
    if (t[i]?.p === '=') {
      i++;
      id();
    } else if (t[i]?.p === '->') {
      i++;
      edges.push([first, id()]);
      if (t[i]?.p === '[') attrs();
    } else {
      if (!['node', 'edge', 'graph'].includes(first)) nodes.add(first);
      if (t[i]?.p === '[') attrs();
    }
    expect(';');
  }
  expect('}');
  assert.equal(i, t.length, 'DOT: nothing after the graph');
  return { nodes, edges };
}

test('dot: a digraph the DOT grammar reads, every edge between declared nodes, quotes escaped', () => {
  const text = renderGraphDot(report());
  const { nodes, edges } = parseDot(text);
  assert.deepEqual([...nodes], ['net', 'cache', 'db', 'app', 'say \\"hi\\"']);
  assert.equal(edges.length, 5);
  for (const [from, to] of edges) assert.ok(nodes.has(from) && nodes.has(to), `${from} -> ${to}`);
  assert.match(text, /"db" -> "app" \[label="outputs.url at \/env\/\\"DB\\""\];/);
  const dot = spawnSync('dot', ['-Tsvg'], { input: text, encoding: 'utf8' });
  if (dot.error) return; // Graphviz is not installed here: the parser above is the check.
  assert.equal(dot.status, 0, dot.stderr);
  assert.match(dot.stdout, /<svg/);
});

test('mermaid: a flowchart whose nodes are declared before use, labels quoted without a raw double quote', () => {
  const lines = renderGraphMermaid(report()).trimEnd().split('\n');
  assert.equal(lines[0], 'flowchart LR');
  const declared = new Set();
  for (const line of lines.slice(1)) {
    const node = /^ {2}(n\d+)\["([^"]*)"\]$/.exec(line);
    const edge = /^ {2}(n\d+) -- "([^"]*)" --> (n\d+)$/.exec(line);
    const style = /^ {2}style (n\d+) stroke:#[0-9a-f]{6},stroke-width:2px$/.exec(line);
    assert.ok(node || edge || style, `mermaid: not a statement: ${line}`);
    if (node) declared.add(node[1]);
    for (const ref of edge ? [edge[1], edge[3]] : style ? [style[1]] : []) assert.ok(declared.has(ref), `${ref} is declared first`);
  }
  assert.equal(declared.size, 5);
  assert.ok(lines.includes('  n5["say #quot;hi#quot;<br/>Command · uncertain"]'), lines.join('\n'));
});
