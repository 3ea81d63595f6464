// The run record's layout (src/state/run-record.ts): unit records spread over directories, and
// records of earlier versions (flat units/NAME.yaml) still read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readRecordedRuns, readRunUnit, runRefName, serializeRunUnit, unitFile } from '../../dist/state/run-record.js';
import { MemoryRepository, MemoryStateStore, memoryLocation } from '../fakes/memory-store.mjs';

const author = { name: 'A', email: 'a@example.com' };
const record = (unit) => ({ unit, uid: 'u', kind: 'Command', executionKey: 'sha256:k', startedAt: 'x', desired: { lifecycle: { state: 'active' } } });

test('a unit record lives at units/BB/NAME.yaml, BB two hex digits of the name', () => {
  assert.match(unitFile('db'), /^units\/[0-9a-f]{2}\/db\.yaml$/);
  assert.equal(unitFile('db'), unitFile('db'), 'the same place every time');
  const dirs = new Set(Array.from({ length: 200 }, (_, i) => unitFile(`u${i}`).split('/')[1]));
  assert.ok(dirs.size > 100, `200 units over ${dirs.size} directories`);
});

test('records in directories and flat records of earlier versions are both read', async () => {
  const store = new MemoryStateStore(new MemoryRepository(), memoryLocation('dev'));
  const changes = new Map([
    ['run.yaml', 'kind: Run\nrun: r1\n'],
    [unitFile('new'), serializeRunUnit(record('new'))],
    ['units/old.yaml', serializeRunUnit(record('old'))],
  ]);
  const [oid] = await store.writeCommits([{ changes, message: 'm', author, timeMs: 0 }]);
  const ref = runRefName(store.loc, 'r1');
  assert.deepEqual(await store.write([{ ref, expect: null, to: oid }]), { ok: true });
  const [run] = await readRecordedRuns(store.reader, store.loc, await store.snapshot());
  assert.deepEqual([...run.units.keys()].sort(), ['new', 'old']);
  assert.equal((await readRunUnit(store.reader, oid, 'new')).unit, 'new');
  assert.equal((await readRunUnit(store.reader, oid, 'old')).unit, 'old');
  assert.equal(await readRunUnit(store.reader, oid, 'missing'), undefined);
});

test("a checkpoint written in front of a marker's text is the record serializeRunUnit writes", async () => {
  const { withCheckpoint } = await import('../../dist/state/run-record.js');
  const marker = {
    ...record('db'),
    desired: { uid: 'u', kind: 'Command', rendering: { run: ['a', 'b'], env: { X: 'line 1\nline 2' } }, lifecycle: { state: 'active' } },
  };
  for (const checkpoint of [
    { result: 'receipt', finishedAt: 'x', outputs: { url: 'postgres://db', n: 3, nested: { a: [1, 'two'] } } },
    { result: 'failed', finishedAt: 'x', reason: 'command exited with code 1', retryable: true },
    { result: 'not-started', finishedAt: 'x', reason: 'held by A' },
  ]) {
    assert.equal(withCheckpoint(serializeRunUnit(marker), checkpoint), serializeRunUnit({ ...marker, checkpoint }));
  }
});
