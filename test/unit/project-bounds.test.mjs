// Source that asks for more than Nyl can do safely is refused when the project loads, with file,
// line and a fix (issue 9, items 7 and 8): durations out of their range, a lease shorter than its
// renewal can serve, prototype keys, oversized files and alias bombs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { at, documents, loadErrors, memoryTree, resource } from '../support/memory-tree.mjs';

const errorsOf = (files) => loadErrors(loadProject, files);

test('durations are bounded: timeout 1s..7d, lease.duration 2s..24h (Node timers overflow above 2^31-1 ms)', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'big', 'lease: {duration: 2000h}'),
      resource('Environment', 'tiny', 'lease: {duration: 1s}'),
      resource('Command', 'slow', 'run: [a]', 'timeout: 600h'),
      resource('Command', 'fast', 'run: [a]', 'timeout: 500ms'),
      resource('Command', 'overflow', 'run: [a]', 'timeout: 99999999999999999999d'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer]), [
    [5, '/spec/lease/duration'],
    [11, '/spec/lease/duration'],
    [18, '/spec/timeout'],
    [25, '/spec/timeout'],
    [32, '/spec/timeout'],
  ]);
  assert.ok(errors.every((e) => e.code === 'NYL-SOURCE-INVALID'));
  assert.match(errors[0].message, /2000h is out of range: it must be from 2s to 24h/);
  assert.match(errors[0].fix, /24h/);
  assert.match(errors[1].message, /1s is out of range/, 'a lease shorter than its renewal can serve');
  assert.match(errors[2].message, /600h is out of range: it must be from 1s to 7d/);
  assert.match(errors[3].message, /500ms is out of range/);
});

test('durations at their bounds load', async () => {
  const p = await loadProject('/p', memoryTree({
    'nyl.yaml': documents(
      resource('Environment', 'short', 'lease: {duration: 2s}'),
      resource('Environment', 'long', 'lease: {duration: 24h}'),
      resource('Command', 'a', 'run: [a]', 'timeout: 1s'),
      resource('Command', 'b', 'run: [a]', 'timeout: 7d'),
    ),
  }));
  assert.equal(p.environments.get('short').spec.lease.durationMs, 2000);
  assert.equal(p.environments.get('long').spec.lease.durationMs, 24 * 3600 * 1000);
});
