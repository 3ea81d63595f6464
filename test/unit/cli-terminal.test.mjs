// Nyl's stderr on a terminal: the live status line of long-running units stays below the other
// lines (cleared before each, drawn again after), cut to the terminal's width; elsewhere plain lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stderrPorts } from '../../dist/cli/terminal.js';
import { elapsed } from '../../dist/run/progress.js';

function stream({ isTTY = true, columns = 80 } = {}) {
  const writes = [];
  return { writes, isTTY, columns, write: (t) => writes.push(t) };
}

const CLEAR = '\r\x1b[K';

test('not a terminal, or a dumb one: plain lines and no status line', () => {
  for (const [s, env] of [
    [stream({ isTTY: false }), {}],
    [stream(), { TERM: 'dumb' }],
  ]) {
    const ports = stderrPorts(s, env);
    assert.equal(ports.liveStatus, undefined);
    ports.log('hello');
    assert.deepEqual(s.writes, ['hello\n']);
  }
});

test('a terminal: the status line is rewritten in place, cleared before each line and drawn again after it', () => {
  const s = stream();
  const { log, liveStatus } = stderrPorts(s, {});
  log('before');
  liveStatus.set('dev', 'migrate 1m02s, db 12s');
  liveStatus.set('dev', 'migrate 1m02s, db 12s');
  log('  [dev/db] a line');
  liveStatus.set('prod', 'api 3s');
  liveStatus.set('dev', undefined);
  liveStatus.set('prod', undefined);
  log('after');
  assert.deepEqual(s.writes, [
    'before\n',
    `${CLEAR}running: migrate 1m02s, db 12s`,
    `${CLEAR}  [dev/db] a line\nrunning: migrate 1m02s, db 12s`,
    `${CLEAR}running: dev: migrate 1m02s, db 12s; prod: api 3s`,
    `${CLEAR}running: api 3s`,
    CLEAR,
    'after\n',
  ]);
});

test("the status line is cut to the terminal's width: a wrapped line cannot be cleared", () => {
  const s = stream({ columns: 30 });
  stderrPorts(s, {}).liveStatus.set('dev', 'a-very-long-unit-name 1m02s, another 3s');
  assert.equal(s.writes[0], `${CLEAR}running: a-very-long-unit-...`);
  assert.equal(s.writes[0].length - CLEAR.length, 29);
});

test('elapsed time reads like a clock', () => {
  assert.deepEqual([0, 999, 12_000, 62_000, 90_000, 3_600_000, 3_909_000].map(elapsed), ['0s', '0s', '12s', '1m02s', '1m30s', '1h00m00s', '1h05m09s']);
});
