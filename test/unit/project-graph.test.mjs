import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consumersFirstOrder, dependenciesOf, dependencyOrder, dependentsOf, findCycle, findCycles } from '../../dist/project/graph.js';

const g = (obj) => new Map(Object.entries(obj).map(([k, deps]) => [k, { dependsOn: deps }]));

test('dependencyOrder puts dependencies first and breaks ties by name', () => {
  const units = g({ web: ['api'], api: ['db', 'cache'], db: [], cache: [], zeta: [], alpha: [] });
  assert.deepEqual(dependencyOrder(units), ['alpha', 'cache', 'db', 'api', 'web', 'zeta']);
});

test('dependencyOrder is independent of insertion order', () => {
  const a = g({ c: ['a'], b: ['a'], a: [] });
  const b = g({ a: [], b: ['a'], c: ['a'] });
  assert.deepEqual(dependencyOrder(a), ['a', 'b', 'c']);
  assert.deepEqual(dependencyOrder(b), ['a', 'b', 'c']);
});

test('dependencyOrder over a subset ignores edges leaving it; unknown names are ignored', () => {
  const units = g({ web: ['api', 'ghost'], api: ['db'], db: [] });
  assert.deepEqual(dependencyOrder(units, ['web', 'db']), ['db', 'web']);
  assert.deepEqual(dependencyOrder(units), ['db', 'api', 'web']);
});

test('dependencyOrder throws on a cycle and names it', () => {
  assert.throws(() => dependencyOrder(g({ a: ['b'], b: ['a'] })), /dependency cycle: a -> b -> a/);
});

test('consumersFirstOrder is the teardown order', () => {
  const units = g({ web: ['api'], api: ['db'], db: [], log: [] });
  assert.deepEqual(consumersFirstOrder(units), ['log', 'web', 'api', 'db']);
});

test('findCycle names the cycle from its smallest member', () => {
  assert.equal(findCycle(g({ a: ['b'], b: [] })), undefined);
  assert.deepEqual(findCycle(g({ c: ['a'], a: ['b'], b: ['c'], d: ['a'] })), ['a', 'b', 'c', 'a']);
  assert.deepEqual(findCycle(g({ self: ['self'] })), ['self', 'self']);
});

test('findCycles reports each independent cycle once', () => {
  const cycles = findCycles(g({ a: ['b'], b: ['a'], x: ['y'], y: ['z'], z: ['x'], free: ['a'] }));
  assert.deepEqual(cycles, [
    ['a', 'b', 'a'],
    ['x', 'y', 'z', 'x'],
  ]);
});

test('findCycles picks the shortest cycle through the smallest member', () => {
  assert.deepEqual(findCycle(g({ a: ['d', 'b'], b: ['c'], c: ['a'], d: ['a'] })), ['a', 'd', 'a']);
});

test('dependentsOf and dependenciesOf are transitive', () => {
  const units = g({ web: ['api'], api: ['db'], worker: ['db'], db: [], report: ['web'] });
  assert.deepEqual(dependentsOf(units, 'db'), ['api', 'report', 'web', 'worker']);
  assert.deepEqual(dependentsOf(units, ['api', 'worker']), ['report', 'web']);
  assert.deepEqual(dependentsOf(units, 'report'), []);
  assert.deepEqual(dependenciesOf(units, 'report'), ['api', 'db', 'web']);
});

test('a long chain does not overflow the stack', () => {
  const obj = {};
  for (let i = 0; i < 20000; i++) obj[`u${String(i).padStart(5, '0')}`] = i === 0 ? [] : [`u${String(i - 1).padStart(5, '0')}`];
  const order = dependencyOrder(g(obj));
  assert.equal(order[0], 'u00000');
  assert.equal(findCycle(g(obj)), undefined);
});
