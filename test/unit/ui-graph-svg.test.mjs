// nyl ui's dependency graph (ui/graph-svg.ts): the inline SVG a GraphReport becomes. The output is
// read back by a small tokenizer of the markup it may contain (tags with double-quoted attributes,
// escaped text), which checks it is well formed and balanced, then the geometry is read from the
// rects and paths: columns by layer, no overlap, edges from the right of a unit to the left of
// the next, no crossing where ordering can avoid one, and no edge drawn behind a unit it does not
// join (an edge spanning several columns goes round the units in between).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GRAPH_CSS, graphLegend, graphSvg } from '../../dist/ui/graph-svg.js';
import { ASSETS } from '../../dist/ui/assets.js';
import { pathOf, render } from '../../dist/ui/html.js';

const node = (name, state = 'current', detail = '') => ({ name, kind: 'Command', state, detail });
const href = (unit) => pathOf('environments', 'dev', 'units', unit);
const svgOf = (nodes, edges, environment = 'dev') => render(graphSvg({ environment, nodes, edges }, href));

/** The shop: network -> database, network -> cache, database -> migrate (twice), migrate and cache -> smoke-test. */
function shop() {
  return svgOf(
    [node('network'), node('database', 'failed'), node('cache', 'held'), node('migrate', 'pending'), node('smoke-test', 'awaiting-dependencies')],
    [
      { from: 'network', to: 'database', via: 'dependsOn' },
      { from: 'network', to: 'cache', via: 'reference', output: 'name', pointer: '/env/NETWORK' },
      { from: 'database', to: 'migrate', via: 'dependsOn' },
      { from: 'database', to: 'migrate', via: 'reference', output: 'url', pointer: '/env/DATABASE_URL' },
      { from: 'migrate', to: 'smoke-test', via: 'dependsOn' },
      { from: 'cache', to: 'smoke-test', via: 'trigger' },
    ],
  );
}

const decode = (text) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/**
 * The markup as a tree: each tag must be `<name attr="value" ...>`, `</name>` or `<name .../>`,
 * every attribute double-quoted, text free of raw < > " and of any & but the escaper's entities,
 * and every open tag closed in order. Attribute values and text come back decoded.
 */
function parse(markup) {
  const root = { name: '#root', attrs: {}, children: [], text: '' };
  const stack = [root];
  const token = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[a-zA-Z][\w:-]*="[^"<>]*")*)\s*(\/?)>|([^<>]+)/gy;
  while (token.lastIndex < markup.length) {
    const at = token.lastIndex;
    const m = token.exec(markup);
    assert.ok(m, `malformed markup at ${JSON.stringify(markup.slice(at, at + 40))}`);
    const [, closing, name, attrText, selfClosing, text] = m;
    const top = stack[stack.length - 1];
    if (text !== undefined) {
      assert.doesNotMatch(text, /"|&(?!(?:lt|gt|amp|quot|#39);)/, `unescaped text ${JSON.stringify(text)}`);
      top.text += decode(text);
    } else if (closing) {
      assert.equal(top.name, name, `</${name}> closes <${top.name}>`);
      stack.pop();
    } else {
      const attrs = {};
      for (const [, key, value] of attrText.matchAll(/([a-zA-Z][\w:-]*)="([^"]*)"/g)) {
        assert.ok(!(key in attrs), `attribute ${key} twice on <${name}>`);
        assert.doesNotMatch(value, /&(?!(?:lt|gt|amp|quot|#39);)/, `unescaped attribute ${key}`);
        attrs[key] = decode(value);
      }
      const element = { name, attrs, children: [], text: '' };
      top.children.push(element);
      if (!selfClosing) stack.push(element);
    }
  }
  assert.equal(stack.length, 1, `<${stack[stack.length - 1].name}> is never closed`);
  return root;
}

function* elements(tree) {
  for (const child of tree.children) {
    yield child;
    yield* elements(child);
  }
}

const byName = (tree, name) => [...elements(tree)].filter((e) => e.name === name);
const titleOf = (element) => element.children.find((c) => c.name === 'title')?.text;

/** Each unit's box, from its <a data-unit> and <rect>. */
function boxes(tree) {
  const out = new Map();
  for (const a of byName(tree, 'a')) {
    const rect = a.children.find((c) => c.name === 'rect');
    const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((k) => Number(rect.attrs[k]));
    out.set(a.attrs['data-unit'], { x, y, w, h });
  }
  return out;
}

/** A path's `d` as absolute commands: `M x y`, then cubics `C x1 y1 x2 y2 x y` and lines `L x y`, each with its start point. */
function commands(d) {
  assert.match(d, /^M[-\d. ]+(?: [CL][-\d. ]+)*$/, `only M, C and L: ${d}`);
  const out = [];
  let at;
  for (const [, op, args] of d.matchAll(/([MCL])([^MCL]*)/g)) {
    const n = args
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    assert.equal(n.length, { M: 2, L: 2, C: 6 }[op], `${op}${args}`);
    const points = [];
    for (let i = 0; i < n.length; i += 2) points.push({ x: n[i], y: n[i + 1] });
    out.push({ op, from: at, points });
    at = points[points.length - 1];
  }
  assert.equal(out[0].op, 'M');
  return out;
}

/** Each edge's end points: where its `M` starts and where its last segment ends. */
function edgeEnds(path) {
  const all = commands(path.attrs.d);
  const last = all[all.length - 1].points;
  return { start: all[0].points[0], end: last[last.length - 1] };
}

const lerp = (a, b, t) => ({ x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t });
function bezier(p0, p1, p2, p3, t) {
  const [a, b, c] = [lerp(p0, p1, t), lerp(p1, p2, t), lerp(p2, p3, t)];
  return lerp(lerp(a, b, t), lerp(b, c, t), t);
}

/** Points along a path, every segment cut into `steps` pieces. */
function samples(d, steps = 64) {
  const out = [];
  for (const { op, from, points } of commands(d)) {
    if (op === 'M') out.push(points[0]);
    for (let i = 1; op !== 'M' && i <= steps; i++) {
      out.push(op === 'C' ? bezier(from, ...points, i / steps) : lerp(from, points[0], i / steps));
    }
  }
  return out;
}

/** True when `p` lies inside `box` grown by `margin` on every side. */
const inside = (p, box, margin = 2) => p.x > box.x - margin && p.x < box.x + box.w + margin && p.y > box.y - margin && p.y < box.y + box.h + margin;

const edgePaths = (tree) => byName(tree, 'path').filter((p) => p.attrs.class?.startsWith('edge'));

/** Every edge whose path passes through a unit's box other than its own two ends, as `from>to behind unit`. */
function edgesBehindUnits(markup) {
  const tree = parse(markup);
  const b = boxes(tree);
  const behind = [];
  for (const path of edgePaths(tree)) {
    const ends = [path.attrs['data-from'], path.attrs['data-to']];
    const points = samples(path.attrs.d);
    for (const [unit, box] of b) {
      if (!ends.includes(unit) && points.some((p) => inside(p, box))) behind.push(`${ends.join('>')} behind ${unit}`);
    }
  }
  return behind;
}

/** a -> b -> c -> d, plus the long a -> d and x -> d: two links each crossing the columns of b and c. */
function longEdges() {
  return svgOf(
    [node('a'), node('b'), node('c'), node('d'), node('x')],
    ['a>b', 'b>c', 'c>d', 'a>d', 'x>d'].map((pair) => ({ from: pair[0], to: pair[2], via: 'dependsOn' })),
  );
}

test('the shop: one column per layer (longest path), no overlapping boxes', () => {
  const tree = parse(shop());
  const b = boxes(tree);
  assert.equal(b.size, 5);
  const x = (name) => b.get(name).x;
  assert.ok(x('network') < x('database'));
  assert.equal(x('database'), x('cache'));
  assert.ok(x('cache') < x('migrate'));
  assert.ok(x('migrate') < x('smoke-test'), 'smoke-test comes after migrate, not next to it (longest path)');
  const all = [...b.values()];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const [p, q] = [all[i], all[j]];
      const apart = p.x + p.w <= q.x || q.x + q.w <= p.x || p.y + p.h <= q.y || q.y + q.h <= p.y;
      assert.ok(apart, `boxes ${i} and ${j} overlap`);
    }
  }
  const svg = byName(tree, 'svg')[0];
  const [vw, vh] = svg.attrs.viewBox.split(' ').slice(2).map(Number);
  assert.equal(Number(svg.attrs.width), vw);
  assert.equal(Number(svg.attrs.height), vh);
  for (const box of all) assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.w <= vw && box.y + box.h <= vh, 'every box inside the drawing');
});

/**
 * Where each edge leaves and enters: on the right side of the dependency and the left side of the
 * dependent, inside the box's height; the edges of one side at distinct heights, ordered like the
 * heights of their other ends (so they fan out without crossing at the box); one alone at the middle.
 */
function checkPorts(markup) {
  const tree = parse(markup);
  const b = boxes(tree);
  const paths = edgePaths(tree);
  const sides = new Map();
  for (const path of paths) {
    const { start, end } = edgeEnds(path);
    const from = b.get(path.attrs['data-from']);
    const to = b.get(path.attrs['data-to']);
    assert.equal(start.x, from.x + from.w, 'leaves on the right side');
    assert.equal(end.x, to.x, 'enters on the left side');
    for (const [p, box] of [
      [start, from],
      [end, to],
    ])
      assert.ok(p.y >= box.y + 4 && p.y <= box.y + box.h - 4, `inside the side of the box: ${path.attrs.d}`);
    const all = commands(path.attrs.d);
    const second = all[1].points[all[1].points.length - 1];
    const last = all[all.length - 1];
    for (const [key, y, other] of [
      [`out:${path.attrs['data-from']}`, start.y, second.y],
      [`in:${path.attrs['data-to']}`, end.y, last.from.y],
    ])
      sides.set(key, [...(sides.get(key) ?? []), { y, other }]);
  }
  for (const [key, ports] of sides) {
    const box = b.get(key.slice(key.indexOf(':') + 1));
    if (ports.length === 1) assert.equal(ports[0].y, box.y + box.h / 2, `${key}: one edge alone at the middle`);
    const ys = ports.map((p) => p.y);
    assert.equal(new Set(ys).size, ys.length, `${key}: each edge at its own height`);
    const byPort = [...ports].sort((p, q) => p.y - q.y).map((p) => p.other);
    assert.deepEqual(
      byPort,
      [...byPort].sort((p, q) => p - q),
      `${key}: ordered like their other ends`,
    );
  }
  return { tree, paths };
}

test('the shop: edges leave the right side of the dependency and enter the left side of the dependent, spread and ordered, before the nodes', () => {
  const markup = shop();
  const { tree, paths } = checkPorts(markup);
  assert.equal(paths.length, 5, 'one path per pair of units');
  for (const path of paths) assert.equal(path.attrs['marker-end'], 'url(#nyl-arrow)');
  assert.equal(byName(tree, 'marker').length, 1);
  assert.equal(byName(tree, 'marker')[0].attrs.id, 'nyl-arrow');
  assert.ok(markup.lastIndexOf('class="edge') < markup.indexOf('class="node'), 'edges are drawn first, under the nodes');
  const classOf = (from, to) => paths.find((p) => p.attrs['data-from'] === from && p.attrs['data-to'] === to).attrs.class;
  assert.equal(classOf('network', 'database'), 'edge via-dependsOn');
  assert.equal(classOf('network', 'cache'), 'edge via-reference');
  assert.equal(classOf('cache', 'smoke-test'), 'edge via-trigger');
});

test('the shop: cache -> smoke-test goes round migrate, through a straight lane in its column', () => {
  const tree = parse(shop());
  const b = boxes(tree);
  const migrate = b.get('migrate');
  const path = edgePaths(tree).find((p) => p.attrs['data-from'] === 'cache' && p.attrs['data-to'] === 'smoke-test');
  const behind = samples(path.attrs.d).filter((p) => inside(p, migrate));
  assert.deepEqual(behind, [], `cache -> smoke-test passes behind migrate: ${path.attrs.d}`);
  const lanes = commands(path.attrs.d).filter((c) => c.op === 'L');
  assert.equal(lanes.length, 1, 'one straight run, across the one column in between');
  const [lane] = lanes;
  assert.deepEqual([lane.from.x, lane.points[0].x], [migrate.x, migrate.x + migrate.w], "the run spans migrate's column");
  assert.equal(lane.from.y, lane.points[0].y, 'the run is horizontal');
  assert.ok(lane.from.y >= migrate.y + migrate.h + 10 || lane.from.y <= migrate.y - 10, 'the lane keeps clear of migrate');
});

test('long edges: no edge passes behind a unit other than its own two ends', () => {
  assert.deepEqual({ shop: edgesBehindUnits(shop()), longEdges: edgesBehindUnits(longEdges()) }, { shop: [], longEdges: [] });
  const b = boxes(parse(longEdges()));
  assert.ok(b.get('a').x < b.get('b').x && b.get('b').x < b.get('c').x && b.get('c').x < b.get('d').x, 'd is three columns right of a');
  assert.equal(b.get('x').x, b.get('a').x);
});

test('long edges: one smooth path each, horizontal at every joint, a straight run per column crossed', () => {
  const tree = parse(longEdges());
  const b = boxes(tree);
  const paths = edgePaths(tree);
  assert.deepEqual(
    paths.map((p) => `${p.attrs['data-from']}>${p.attrs['data-to']}`),
    ['a>b', 'b>c', 'c>d', 'a>d', 'x>d'],
  );
  for (const path of paths) {
    const [from, to] = [b.get(path.attrs['data-from']), b.get(path.attrs['data-to'])];
    const { start, end } = edgeEnds(path);
    assert.equal(start.x, from.x + from.w);
    assert.equal(end.x, to.x, 'the arrowhead stays on the left side of the dependent');
    const segments = commands(path.attrs.d).slice(1);
    for (const { op, from: p0, points } of segments) {
      if (op === 'C')
        assert.ok(
          points[0].y === p0.y && points[1].y === points[2].y && points[0].x > p0.x && points[1].x < points[2].x,
          `a cubic with horizontal tangents: ${path.attrs.d}`,
        );
      else assert.ok(points[0].y === p0.y && points[0].x > p0.x, `a straight run left to right: ${path.attrs.d}`);
    }
    const crossed = Math.round((to.x - from.x) / (b.get('b').x - b.get('a').x)) - 1;
    assert.deepEqual(
      segments.map((s) => s.op),
      ['C', ...Array(crossed).fill(['L', 'C']).flat()],
      path.attrs.d,
    );
  }
  assert.equal(longEdges(), longEdges(), 'deterministic');
});

/** How far each edge's path (its points and control points) strays above or below the band between its two ends, by edge. */
function excursions(markup) {
  return Object.fromEntries(
    edgePaths(parse(markup)).map((path) => {
      const ys = commands(path.attrs.d).flatMap((c) => c.points.map((p) => p.y));
      const [a, b] = [ys[0], ys[ys.length - 1]];
      return [`${path.attrs['data-from']}>${path.attrs['data-to']}`, Math.max(0, ...ys.map((y) => Math.max(y - Math.max(a, b), Math.min(a, b) - y)))];
    }),
  );
}

test('long edges run straight through the columns they cross instead of looping round them', () => {
  // Pins: each column was stacked and centred on its own, so a long link's lanes sat wherever the stack put them.
  assert.deepEqual(excursions(longEdges()), { 'a>b': 0, 'b>c': 0, 'c>d': 0, 'a>d': 0, 'x>d': 0 });
  const fan = svgOf(
    ['s', 'a', 'b', 'c', 't'].map((n) => node(n)),
    ['s>a', 'a>b', 'b>c', 'c>t', 's>t', 's>b'].map((p) => ({ from: p[0], to: p[2], via: 'dependsOn' })),
  );
  const strayed = Object.values(excursions(fan)).reduce((sum, e) => sum + e, 0);
  assert.ok(strayed <= 24, `the edges of the fan stray ${strayed} px outside their ends' band`);
  checkPorts(fan);
});

test('a unit with many edges: its ports spread over its sides, ordered, none crossing at the box', () => {
  const names = ['hub', 'a', 'b', 'c', 'd', 'e', 'f', 'g'];
  const edges = [
    ...['a', 'b', 'c'].map((n) => ({ from: n, to: 'hub', via: 'dependsOn' })),
    ...['d', 'e', 'f', 'g'].map((n) => ({ from: 'hub', to: n, via: n === 'e' ? 'reference' : 'dependsOn', output: 'x', pointer: '/env/X' })),
    { from: 'a', to: 'g', via: 'trigger' },
  ];
  checkPorts(
    svgOf(
      names.map((n) => node(n)),
      edges,
    ),
  );
});

test('the shop: the svg, node and label markup the page relies on', () => {
  const tree = parse(shop());
  const svg = byName(tree, 'svg')[0];
  assert.equal(svg.attrs.class, 'graph');
  assert.equal(svg.attrs.role, 'img');
  assert.equal(svg.attrs['aria-label'], 'Dependency graph of dev');
  const smoke = byName(tree, 'a').find((a) => a.attrs['data-unit'] === 'smoke-test');
  assert.equal(smoke.attrs.href, '/environments/dev/units/smoke-test');
  assert.equal(smoke.attrs.class, 'node state-awaiting-dependencies');
  assert.deepEqual(
    smoke.children.map((c) => c.name),
    ['title', 'rect', 'text', 'text'],
  );
  assert.ok(Number(smoke.children[1].attrs.rx) > 0);
  assert.deepEqual(
    smoke.children.slice(2).map((t) => [t.attrs.class, t.text]),
    [
      ['node-name', 'smoke-test'],
      ['node-state', 'Command · awaiting-dependencies'],
    ],
  );
  assert.match(titleOf(smoke), /smoke-test[\s\S]*Command · awaiting-dependencies/);
});

test('two edges between one pair: one path whose title lists both reasons, classed as a reference', () => {
  const tree = parse(shop());
  const paths = byName(tree, 'path').filter((p) => p.attrs['data-from'] === 'database' && p.attrs['data-to'] === 'migrate');
  assert.equal(paths.length, 1);
  assert.equal(titleOf(paths[0]), 'database → migrate: dependsOn; outputs.url at /env/DATABASE_URL');
  assert.equal(paths[0].attrs.class, 'edge via-reference');
});

test("hostile names, details and pointers appear only escaped; hrefs are unitHref's, escaped", () => {
  const evil = '<img src=x onerror=alert(1)>';
  const quoted = '"quoted\' & ampersand';
  const markup = render(
    graphSvg(
      {
        environment: `</svg>${quoted}`,
        nodes: [node(evil, 'failed', `${quoted} <script>alert(2)</script>`), node(quoted)],
        edges: [{ from: evil, to: quoted, via: 'reference', output: 'x', pointer: `/env/${evil}` }],
      },
      (unit) => `/u?name=${unit}&x="1"`,
    ),
  );
  assert.doesNotMatch(markup, /<img|<script|<\/svg>"/i);
  assert.ok(markup.includes('&lt;img src=x onerror=alert(1)&gt;'));
  assert.ok(markup.includes('&quot;quoted&#39; &amp; ampersand'));
  const tree = parse(markup);
  const [a1, a2] = byName(tree, 'a');
  assert.equal(a1.attrs['data-unit'], evil);
  assert.equal(a1.attrs.href, `/u?name=${evil}&x="1"`);
  assert.equal(a2.attrs.href, `/u?name=${quoted}&x="1"`);
  assert.ok(titleOf(a1).includes(`${quoted} <script>alert(2)</script>`), 'the detail is in the title, as text');
  assert.equal(a1.children[2].text, '<img src=x onerror=al…', 'a long name is cut with an ellipsis');
  assert.equal(titleOf(byName(tree, 'path').find((p) => p.attrs['data-from'] === evil)), `${evil} → ${quoted}: outputs.x at /env/${evil}`);
  assert.equal(byName(tree, 'svg')[0].attrs['aria-label'], `Dependency graph of </svg>${quoted}`);
});

test('no inline style, no script, no event handler, no external reference', () => {
  for (const markup of [shop(), svgOf([node('onload=x style="a"')], [])]) {
    for (const element of elements(parse(markup))) {
      assert.notEqual(element.name, 'script');
      assert.notEqual(element.name, 'style');
      for (const [key, value] of Object.entries(element.attrs)) {
        assert.notEqual(key, 'style');
        assert.doesNotMatch(key, /^on/i, `event handler ${key}`);
        if (key !== 'href' && key !== 'data-unit') assert.doesNotMatch(value, /https?:|javascript:|url\((?!#nyl-arrow\))/, `${key}="${value}"`);
      }
    }
  }
});

test('a unit with no edges is drawn; an empty graph is a paragraph', () => {
  const tree = parse(svgOf([node('alone', 'retained'), node('db'), node('app')], [{ from: 'db', to: 'app', via: 'dependsOn' }]));
  const b = boxes(tree);
  assert.deepEqual([...b.keys()], ['alone', 'db', 'app']);
  assert.equal(b.get('alone').x, b.get('db').x);
  assert.equal(svgOf([], []), '<p class="empty">No units.</p>');
});

test('a long name is cut at 22 characters, the whole name in the title and data-unit', () => {
  const long = 'a-very-long-unit-name-that-goes-on';
  const a = byName(parse(svgOf([node(long)], [])), 'a')[0];
  assert.equal(a.children[2].text, 'a-very-long-unit-name…');
  assert.equal(Array.from(a.children[2].text).length, 22);
  assert.equal(a.attrs['data-unit'], long);
  assert.ok(titleOf(a).startsWith(long));
});

test('a cycle (which validation refuses) still terminates and draws every unit', () => {
  const edges = [
    { from: 'a', to: 'b', via: 'dependsOn' },
    { from: 'b', to: 'c', via: 'dependsOn' },
    { from: 'c', to: 'a', via: 'trigger' },
    { from: 'c', to: 'c', via: 'dependsOn' },
    { from: 'c', to: 'gone', via: 'dependsOn' },
  ];
  const tree = parse(svgOf([node('a'), node('b'), node('c'), node('d')], edges));
  const b = boxes(tree);
  assert.deepEqual([...b.keys()].sort(), ['a', 'b', 'c', 'd']);
  assert.ok(b.get('a').x < b.get('b').x && b.get('b').x < b.get('c').x, 'the back edge c -> a is ignored for the layout');
  const paths = byName(tree, 'path').filter((p) => p.attrs['data-from']);
  assert.deepEqual(
    paths.map((p) => `${p.attrs['data-from']}>${p.attrs['data-to']}`),
    ['a>b', 'b>c', 'c>a', 'c>c'],
    'edges to unknown units are left out',
  );
});

test('a long chain lays out without recursion limits', () => {
  const names = Array.from({ length: 3000 }, (_, i) => `u${i}`);
  const edges = names.slice(1).map((name, i) => ({ from: names[i], to: name, via: 'dependsOn' }));
  const markup = svgOf(
    names.map((n) => node(n)),
    edges,
  );
  assert.match(markup, /data-unit="u2999"/);
});

test('barycenter ordering removes a crossing the report order would draw', () => {
  // Report order a, b, c, d would put a above b and c above d: a -> d and b -> c would cross.
  const b = boxes(
    parse(
      svgOf(
        [node('a'), node('b'), node('c'), node('d')],
        [
          { from: 'a', to: 'd', via: 'dependsOn' },
          { from: 'b', to: 'c', via: 'dependsOn' },
        ],
      ),
    ),
  );
  assert.equal(b.get('c').x, b.get('d').x);
  assert.ok(b.get('a').y < b.get('b').y, 'the first column keeps the report order');
  assert.ok(b.get('d').y < b.get('c').y, 'd moves up next to a');
});

test('a wider graph: ordering settles so that links between the same columns do not cross', () => {
  // Two independent chains interleaved in the report order, plus a fan-in.
  const nodes = ['r1', 'r2', 'r3', 'x3', 'x1', 'x2', 'sink'].map((n) => node(n));
  const edges = [
    { from: 'r1', to: 'x1', via: 'dependsOn' },
    { from: 'r2', to: 'x2', via: 'dependsOn' },
    { from: 'r3', to: 'x3', via: 'dependsOn' },
    { from: 'x1', to: 'sink', via: 'dependsOn' },
    { from: 'x3', to: 'sink', via: 'dependsOn' },
  ];
  const b = boxes(parse(svgOf(nodes, edges)));
  const ys = (names) => names.map((n) => b.get(n).y);
  const order = (names) => [...names].sort((p, q) => b.get(p).y - b.get(q).y);
  assert.deepEqual(
    order(['x1', 'x2', 'x3']),
    order(['r1', 'r2', 'r3']).map((r) => `x${r[1]}`),
    `${ys(['r1', 'r2', 'r3'])} / ${ys(['x1', 'x2', 'x3'])}`,
  );
});

test('deterministic: the same report gives the same bytes, numbers with at most one decimal', () => {
  assert.equal(shop(), shop());
  const odd = svgOf(
    [node('a'), node('b'), node('c'), node('d')],
    [
      { from: 'a', to: 'b', via: 'dependsOn' },
      { from: 'a', to: 'c', via: 'dependsOn' },
      { from: 'a', to: 'd', via: 'dependsOn' },
    ],
  );
  assert.equal(
    odd,
    svgOf(
      [node('a'), node('b'), node('c'), node('d')],
      [
        { from: 'a', to: 'b', via: 'dependsOn' },
        { from: 'a', to: 'c', via: 'dependsOn' },
        { from: 'a', to: 'd', via: 'dependsOn' },
      ],
    ),
  );
  for (const markup of [shop(), longEdges()]) {
    for (const number of markup.match(/(?<=[" ,MCL])-?\d+\.\d+/g) ?? []) assert.match(number, /^-?\d+\.\d$/);
  }
});

test('GRAPH_CSS: colours by state class, dashed or distinct references, a dark scheme, hover outline', () => {
  for (const state of [
    'current',
    'failed',
    'uncertain',
    'pending',
    'outdated',
    'awaiting-dependencies',
    'blocked',
    'held',
    'awaiting-approval',
    'drifted',
    'running',
    'pending-teardown',
    'tearing-down',
    'leaving',
    'retained',
    'released',
  ]) {
    assert.ok(GRAPH_CSS.includes(`.state-${state} `), `no rule for state-${state}`);
  }
  assert.match(GRAPH_CSS, /\.via-reference[^{]*\{[^}]*stroke-dasharray/);
  assert.match(GRAPH_CSS, /@media \(prefers-color-scheme: dark\)/);
  assert.match(GRAPH_CSS, /\.node:hover rect[^{]*\{[^}]*stroke-width/);
  assert.equal((GRAPH_CSS.match(/\{/g) ?? []).length, (GRAPH_CSS.match(/\}/g) ?? []).length);
});

test('the legend says what solid, dashed and dotted edges and the outlines mean, drawn with the classes of the graph itself', () => {
  const legend = parse(render(graphLegend()));
  const items = byName(legend, 'li');
  const samples = items.flatMap((li) => byName(li, 'path').map((p) => `${p.attrs.class} ${li.text.trim()}`));
  assert.deepEqual(samples, ['edge via-dependsOn dependsOn', 'edge via-reference reads an output', 'edge via-trigger triggers']);
  assert.deepEqual(
    items.flatMap((li) => byName(li, 'g').map((g) => `${g.attrs.class}: ${li.text.trim()}`)),
    ['node state-current: current', 'node state-pending: waiting or held', 'node state-failed: failed or uncertain'],
  );
  assert.match(GRAPH_CSS, /\.via-reference[^{]*\{[^}]*stroke-dasharray: 6 3/);
  assert.match(GRAPH_CSS, /\.via-trigger[^{]*\{[^}]*stroke-dasharray: 2 3/);
});

test("hover and focus highlight a unit's edges: the script sets classes the stylesheet colours, and nothing else", () => {
  const script = ASSETS.get('/assets/graph.js');
  assert.equal(script.type, 'text/javascript; charset=utf-8');
  for (const event of ['mouseover', 'mouseleave', 'focusin', 'focusout']) assert.ok(script.body.includes(`'${event}'`), event);
  assert.doesNotMatch(script.body, /\.style\b|innerHTML|fetch\(|eval\(/, 'classes only: the CSP forbids inline styles');
  for (const cls of ['focused', 'into', 'out-of', 'near', 'focus']) assert.ok(script.body.includes(`'${cls}'`), cls);
  assert.match(GRAPH_CSS, /\.graph\.focused \.edge \{ opacity/);
  assert.match(GRAPH_CSS, /\.graph\.focused \.edge\.into \{ stroke/);
  assert.match(GRAPH_CSS, /\.graph\.focused \.edge\.out-of \{ stroke/);
});
