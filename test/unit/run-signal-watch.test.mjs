// SignalWatch (src/run/signal-watch.ts) against a scripted signal source: a read that cannot reach
// the state repository is tried again after a growing pause and, if it still fails, leaves the run
// going, with the next look reading again at once; a damaged signal stops the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnostic, NylError } from '../../dist/errors/diagnostic.js';
import { SIGNAL_READ_RETRY_DELAYS_MS, SignalWatch } from '../../dist/run/signal-watch.js';

const DOWN = () => new NylError(diagnostic('NYL-STATE-UNAVAILABLE', 'error', 'the state repository cannot be read: HTTP 503'));
const DAMAGED = () => new NylError(diagnostic('NYL-STATE-CORRUPT', 'error', 'a signal is damaged'));
const HOLD = { ref: 'refs/nyl/dev/signals/r/1', oid: 'o1', run: 'r', unit: 'b', by: 'Alice <a@example.com>', at: '2026-11-30T12:00:00Z' };

/** answers: what each read does in turn ('down', 'damaged', or the signals); then no signal. */
function scriptedSource(answers) {
  const source = {
    reads: 0,
    read: async () => {
      source.reads++;
      const answer = answers.shift() ?? [];
      if (answer === 'down') throw DOWN();
      if (answer === 'damaged') throw DAMAGED();
      return answer;
    },
    mayExist: () => undefined, // over a network: only a read can tell
  };
  return source;
}

function recordingClock() {
  const sleeps = [];
  return { sleeps, now: () => 0, sleep: async (ms) => void sleeps.push(ms) };
}

function recordingState() {
  return {
    stops: [],
    holds: [],
    stop(reason) {
      this.stops.push(reason);
    },
    deliverHold(unit) {
      this.holds.push(unit);
    },
  };
}

test('a read that cannot reach the repository is tried again after 0.5 s, then 1 s; the hold it reads is delivered', async () => {
  const source = scriptedSource(['down', 'down', [HOLD]]);
  const clock = recordingClock();
  const state = recordingState();
  await new SignalWatch(source, clock, state).poll(true);
  assert.deepEqual(clock.sleeps, [500, 1000]);
  assert.deepEqual(state.holds, ['b']);
  assert.deepEqual(state.stops, [], 'the run goes on');
});

test('a read that still fails leaves the run going; the next look reads at once, once, until a read succeeds', async () => {
  const source = scriptedSource(['down', 'down', 'down', 'down', 'down', [HOLD]]);
  const clock = recordingClock();
  const state = recordingState();
  const watch = new SignalWatch(source, clock, state, 60_000);
  await watch.poll(true);
  assert.deepEqual(clock.sleeps, SIGNAL_READ_RETRY_DELAYS_MS, 'one read and three retries');
  assert.equal(source.reads, 4);
  assert.deepEqual(state.stops, [], 'no stop: the run goes on');
  // Within the poll interval, but the last read failed: read again, without waiting.
  await watch.poll(false);
  assert.equal(source.reads, 5);
  assert.equal(clock.sleeps.length, 3, 'tried once');
  await watch.poll(false);
  assert.equal(source.reads, 6);
  assert.deepEqual(state.holds, ['b'], 'the hold is delivered at the first read that sees it');
  // Reads work again: the poll interval applies again, and a later failure is retried in full.
  await watch.poll(false);
  assert.equal(source.reads, 6, 'within the poll interval');
});

test('a damaged signal stops the run at once; so does a failure that is not the repository out of reach', async () => {
  const damaged = recordingState();
  const clock = recordingClock();
  await new SignalWatch(scriptedSource(['damaged']), clock, damaged).poll(true);
  assert.deepEqual(damaged.stops, ['signal-damaged']);
  const broken = recordingState();
  const source = {
    read: async () => {
      throw new Error('internal');
    },
    mayExist: () => true,
  };
  await new SignalWatch(source, clock, broken).poll(true);
  assert.deepEqual(broken.stops, ['state-unavailable']);
  assert.deepEqual(clock.sleeps, [], 'neither is tried again');
});

test('a cancelled run does not wait between tries', async () => {
  const source = scriptedSource(['down', 'down']);
  const clock = recordingClock();
  const state = recordingState();
  const cancel = new AbortController();
  cancel.abort();
  await new SignalWatch(source, clock, state, 200, cancel.signal).poll(true);
  assert.equal(source.reads, 1);
  assert.deepEqual(clock.sleeps, []);
  assert.deepEqual(state.stops, []);
});
