// Group commit (src/run/checkpoints.ts) against a scripted run ref: a checkpoint is pushed as soon
// as its unit ends, with every other ready by then; one push at a time; the checkpoints of the
// units whose end lets others start ride on those units' started markers instead of a push of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit } from '../../dist/run/checkpoints.js';

/** A run ref whose pushes the test completes by hand. */
function scriptedRunRef() {
  const pending = new Map();
  const pushes = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    pushes,
    get maxInFlight() {
      return maxInFlight;
    },
    queue(files) {
      for (const [k, v] of files) pending.set(k, v);
    },
    hasPending: () => pending.size > 0,
    push(message) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const files = [...pending.keys()];
      pending.clear();
      let land;
      const done = new Promise(
        (resolve) =>
          (land = () => {
            inFlight--;
            resolve({ ok: true, updates: [] });
          }),
      );
      pushes.push({ message, files, land });
      return done;
    },
  };
}

const rt = { faults: { reach: async () => {} } };
const turn = () => new Promise((r) => setImmediate(r));

test('a checkpoint is pushed at once; those that end meanwhile ride on the next push; one push at a time', async () => {
  const ref = scriptedRunRef();
  const commits = new GroupCommit(rt, ref);
  commits.add('a', 'units/a.yaml', 'a');
  await turn();
  assert.deepEqual(
    ref.pushes.map((p) => p.files),
    [['units/a.yaml']],
    'a is pushed as soon as it ends',
  );
  commits.add('b', 'units/b.yaml', 'b');
  commits.add('c', 'units/c.yaml', 'c');
  await turn();
  assert.equal(ref.pushes.length, 1, 'no second push while one is in flight');
  ref.pushes[0].land();
  await turn();
  await turn();
  assert.deepEqual(ref.pushes[1].files, ['units/b.yaml', 'units/c.yaml'], 'b and c share the next push');
  ref.pushes[1].land();
  await commits.idle();
  assert.equal(ref.maxInFlight, 1);
});

test('the checkpoints of the units whose end lets others start ride on their started markers', async () => {
  const ref = scriptedRunRef();
  const commits = new GroupCommit(rt, ref);
  const started = commits.start(['c'], new Map([['started/c', 'c']]), [{ unit: 'b', file: 'units/b.yaml', content: 'b' }]);
  await turn();
  assert.equal(ref.pushes.length, 1, 'no push of its own for b');
  assert.deepEqual(ref.pushes[0].files, ['units/b.yaml', 'started/c'], 'one write records both');
  assert.equal(ref.pushes[0].message, 'nyl: start c; checkpoint b\n', 'the started markers name what rides with them');
  ref.pushes[0].land();
  await started;
  commits.add('d', 'units/d.yaml', 'd');
  await turn();
  assert.equal(ref.pushes.length, 2, 'afterwards, checkpoints are pushed as units end again');
});

test('a checkpoint that arrives while the started markers are written waits for that write', async () => {
  const ref = scriptedRunRef();
  const commits = new GroupCommit(rt, ref);
  const started = commits.start(['c'], new Map([['started/c', 'c']]), []);
  await turn();
  commits.add('d', 'units/d.yaml', 'd');
  await turn();
  assert.equal(ref.pushes.length, 1, 'no push beside the started markers');
  assert.equal(ref.maxInFlight, 1);
  ref.pushes[0].land();
  await started;
  await turn();
  await turn();
  assert.deepEqual(ref.pushes[1]?.files, ['units/d.yaml'], 'd goes in the next push');
});

test('a push that throws stops group commit instead of retrying in a loop', async () => {
  const ref = scriptedRunRef();
  let calls = 0;
  ref.push = () => {
    calls++;
    throw new Error('run ref not attached');
  };
  const commits = new GroupCommit(rt, ref);
  commits.add('a', 'units/a.yaml', 'a');
  await commits.idle();
  await turn();
  assert.equal(calls, 1);
  assert.deepEqual(commits.failure, { lost: false, message: 'run ref not attached' });
});

test('a failed push stops group commit; after flush nothing more is pushed', async () => {
  const ref = scriptedRunRef();
  ref.push = () => Promise.resolve({ ok: false, lost: true, result: { ok: false, kind: 'rejected', refs: [], message: 'stale' } });
  const commits = new GroupCommit(rt, ref);
  commits.add('a', 'units/a.yaml', 'a');
  await commits.idle();
  assert.deepEqual(commits.failure, { lost: true, message: 'stale' });
  const ref2 = scriptedRunRef();
  const other = new GroupCommit(rt, ref2);
  other.add('w', 'units/w.yaml', 'w');
  const flushed = other.flush();
  await turn();
  assert.deepEqual(
    ref2.pushes.map((p) => p.files),
    [['units/w.yaml']],
    'flush pushes what waited',
  );
  ref2.pushes[0].land();
  await flushed;
  other.add('x', 'units/x.yaml', 'x');
  await turn();
  assert.equal(ref2.pushes.length, 1, 'nothing after flush');
});

/** A run ref whose pushes answer from a script: 'ok', 'unreachable' or 'lost'. */
function answeringRunRef(answers) {
  const pending = new Map();
  const pushes = [];
  return {
    pushes,
    pending,
    queue(files) {
      for (const [k, v] of files) pending.set(k, v);
    },
    hasPending: () => pending.size > 0,
    async push(message) {
      const answer = answers.shift() ?? 'ok';
      pushes.push({ message, answer });
      if (answer === 'ok') {
        pending.clear();
        return { ok: true, updates: [] };
      }
      if (answer === 'lost') return { ok: false, lost: true, result: { ok: false, kind: 'rejected', refs: [], message: 'stale info' } };
      return { ok: false, lost: false, result: { ok: false, kind: 'unreachable', message: 'could not resolve host' } };
    },
  };
}

test('a push that did not land (the lease write retried it already) stops group commit; the checkpoint stays pending', async () => {
  const down = answeringRunRef(Array(10).fill('unreachable'));
  const commits = new GroupCommit(rt, down);
  commits.add('a', 'units/a.yaml', 'a');
  await commits.idle();
  assert.equal(down.pushes.length, 1, 'no second retry layer');
  assert.deepEqual(commits.failure, { lost: false, message: 'could not resolve host' });
  assert.equal(down.pending.size, 1, 'the checkpoint stays pending for the run to write at its end');

  const lost = answeringRunRef(['lost']);
  const refused = new GroupCommit(rt, lost);
  refused.add('a', 'units/a.yaml', 'a');
  await refused.idle();
  assert.equal(lost.pushes.length, 1);
  assert.equal(refused.failure?.lost, true);
});
