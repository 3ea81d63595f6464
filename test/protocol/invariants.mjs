// The crash invariants of the end-to-end crash suite (test/support/crash-harness.mjs), checked
// on an in-process World:
// - no lease or run ref left, evidence refs only for units still uncertain;
// - no state ref force-moved: every value it ever had is in the first-parent history of its tip;
// - a readable history: every state commit has a `nyl: ` headline and a Nyl-Operation trailer,
//   and each lease break is recorded by exactly one operation;
// - no receipt lost: a receipt a dead run checkpointed became the unit's receipt;
// - no unit forgotten: each is current, uncertain or failed naming a dead run, or waits for one;
// - no unit executed twice unless it was uncertain in between.
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { ENV } from './world.mjs';
import { addRecoveryEvidence, commitBody } from '../support/commit-evidence.mjs';

/** The states of `nyl status` that may list waits: a unit that waits for dependencies, or is blocked by them. */
const WAITING_STATES = ['pending', 'outdated', 'awaiting-dependencies', 'failed', 'uncertain', 'blocked'];

/** Records what a crash left, for the invariants: the dead runs' unit records, the state refs seen. */
export class Journal {
  constructor(world) {
    this.world = world;
    this.deadRuns = new Map();
    this.breaks = [];
    this.seen = { desired: new Set(), observed: new Set() };
    this.note();
  }

  /** Remembers the state refs as they are now. */
  note() {
    const s = this.world.stateRefs();
    if (s.desired) this.seen.desired.add(s.desired);
    if (s.observed) this.seen.observed.add(s.observed);
  }

  /** Remembers every run ref that exists now as a dead run's record. */
  noteDeadRuns() {
    const found = [];
    for (const run of this.world.runRefs()) {
      if (this.deadRuns.has(run)) continue;
      this.deadRuns.set(run, this.world.runRecords(run));
      found.push(run);
    }
    this.note();
    return found;
  }

  async leaseBreak(proc, reason = 'the runner was killed') {
    const r = await proc.run('lease break', { reason });
    if (r.report?.result === 'done') this.breaks.push(r.report.details.run);
    this.note();
    return r;
  }
}

function stateCommits(world) {
  return [...world.repo.commitsOf(world.loc.desiredRef), ...world.repo.commitsOf(world.loc.observedRef)];
}

function assertRefsClean(world, status) {
  assert.equal(world.refs()[world.leaseRef], undefined, `no lease is left: ${JSON.stringify(world.leaseDoc())}`);
  assert.deepEqual(world.runRefs(), [], 'no run ref is left');
  for (const ref of world.evidenceRefs()) {
    const [unit, late] = ref.slice(`refs/nyl/${ENV}/evidence/`.length).split('/');
    // A late checkpoint's evidence (evidence/UNIT/late/RUN) is kept whatever the unit is now.
    if (late === 'late') continue;
    assert.equal(status.units[unit]?.condition?.type, 'uncertain', `${ref} is kept only while ${unit} is uncertain`);
  }
}

function assertFastForwardOnly(world, journal) {
  for (const key of ['desired', 'observed']) {
    const tip = world.stateRefs()[key];
    const history = new Set(world.repo.commitsOf(tip).map((c) => c.oid));
    for (const oid of journal.seen[key]) assert.ok(history.has(oid), `${key} was force-moved: ${oid} is not in the history of ${tip}`);
  }
}

function assertReadableHistory(world, journal) {
  const breaks = [];
  for (const c of stateCommits(world)) {
    assert.match(c.message, /^nyl: \S+ dev/, `commit ${c.oid} has a nyl headline`);
    assert.match(c.message, /^Nyl-Operation: \S+$/m, `commit ${c.oid} has a Nyl-Operation trailer`);
  }
  const seenMessages = new Set();
  for (const c of stateCommits(world)) {
    if (seenMessages.has(c.message)) continue;
    seenMessages.add(c.message);
    const body = commitBody(c.message);
    breaks.push(...(body.leaseBrokenEarlier ?? []), ...(body.leaseBroken ? [body.leaseBroken] : []));
  }
  assert.deepEqual(breaks.map((b) => b.run).sort(), [...journal.breaks].sort(), 'each break is recorded once');
}

/** Units stuck on a dead run's condition, and those that wait (transitively) for them. */
function stuckAndWaiting(status, dead) {
  const stuck = new Set(
    Object.entries(status.units)
      .filter(([, u]) => (u.state === 'uncertain' || u.state === 'failed') && u.condition && dead.has(u.condition.run))
      .map(([n]) => n),
  );
  const waiting = new Set();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, u] of Object.entries(status.units)) {
      if (waiting.has(name) || stuck.has(name) || !WAITING_STATES.includes(u.state) || !u.waits?.length) continue;
      if (u.waits.every((w) => stuck.has(w.unit) || waiting.has(w.unit))) {
        waiting.add(name);
        changed = true;
      }
    }
  }
  return { stuck, waiting };
}

function assertNoReceiptLost(world, journal, superseded) {
  for (const [run, records] of journal.deadRuns) {
    for (const [name, doc] of records) {
      if (doc.checkpoint?.result !== 'receipt' || superseded.includes(name)) continue;
      assert.equal(world.observedDoc(name)?.receipt?.run, run, `the receipt ${run} checkpointed for ${name} is kept`);
    }
  }
}

/** Runs after which a unit may execute again: it was left uncertain or failed by them, or recovered by the next. */
function allowedRepeats(world) {
  const conditionRuns = new Map(world.units.map((u) => [u.name, new Set()]));
  const recoveredBy = new Map(world.units.map((u) => [u.name, new Set()]));
  for (const c of world.repo.commitsOf(world.loc.observedRef)) {
    for (const [file, text] of world.repo.filesAt(c.oid, 'units')) {
      const doc = YAML.parse(text);
      const name = file.replace(/\.yaml$/, '');
      if (doc?.condition?.run) conditionRuns.get(name)?.add(doc.condition.run);
    }
  }
  addRecoveryEvidence(stateCommits(world), conditionRuns, recoveredBy);
  return { conditionRuns, recoveredBy };
}

function assertNoDoubleExecution(world) {
  const { conditionRuns, recoveredBy } = allowedRepeats(world);
  for (const [name, runs] of Object.entries(world.executions())) {
    for (let i = 0; i + 1 < runs.length; i++) {
      assert.notEqual(runs[i], runs[i + 1], `${name} executed twice in run ${runs[i]}`);
      const between = conditionRuns.get(name).has(runs[i]) || recoveredBy.get(name).has(runs[i + 1]);
      assert.ok(between, `${name} executed again by ${runs[i + 1]} without being uncertain after ${runs[i]}: ${runs.join(', ')}`);
    }
  }
}

/** Checks every invariant; returns {counts, stuck, waiting, status}. */
export async function assertInvariants(world, journal, { allCurrent = false, superseded = [] } = {}) {
  const status = (await world.process('status').run('status')).report;
  assertRefsClean(world, status);
  assertFastForwardOnly(world, journal);
  assertReadableHistory(world, journal);
  const { stuck, waiting } = stuckAndWaiting(status, new Set(journal.deadRuns.keys()));
  for (const { name } of world.units) {
    const u = status.units[name];
    assert.ok(u, `status lists ${name}`);
    if (allCurrent) assert.equal(u.state, 'current', `${name} is current: ${JSON.stringify(u)}`);
    else
      assert.ok(
        u.state === 'current' || stuck.has(name) || waiting.has(name),
        `${name} is current, uncertain naming a dead run, or waits for one: ${JSON.stringify(u)}`,
      );
  }
  assertNoReceiptLost(world, journal, superseded);
  assertNoDoubleExecution(world);
  return { counts: world.counts(), stuck: [...stuck].sort(), waiting: [...waiting], status };
}
