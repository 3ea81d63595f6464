// The scratch directories an importer removes for the dead runs it imports
// (src/run/dead-scratch.ts; issue 30, item 7): exactly `nyl-run-<run>-XXXXXX` directories of
// those runs, in this host's temporary directory, when the run's record names this host and its
// process is gone; never another run's, another host's, a live process's, nor anything a symlink
// points to.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeDeadScratch } from '../../dist/run/dead-scratch.js';
import { cleanupAll, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);

const RUN = '0190a0b1-c2d3-7e4f-8a9b-000000000001';
const OTHER = '0190a0b1-c2d3-7e4f-8a9b-000000000002';
const DEAD_PID = 999_999_999;

/** A consumed run as the importer reads it: its id and its run.yaml's holder. */
const recorded = (run, holder = { host: os.hostname(), pid: DEAD_PID }) => ({ run, doc: { holder: { name: 'A <a@x>', ...holder } } });

/** This host, with `tmp` as its temporary directory; no process but `alive` runs. */
const here = (tmp, alive = []) => ({ tmp, host: os.hostname(), isAlive: (pid) => alive.includes(pid) });

/** A scratch directory of `run` under tmp, with a file holding `value`. */
function scratch(tmp, run, suffix = 'aB3xY9', value = 'planted') {
  const dir = path.join(tmp, `nyl-run-${run}-${suffix}`);
  fs.mkdirSync(path.join(dir, 'unit-Qw12er'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dir, 'unit.outputs.json'), `{"token": "${value}"}`);
  fs.writeFileSync(path.join(dir, 'unit-Qw12er', 'container.env'), `TOKEN=${value}\n`);
  return dir;
}

test("a dead run's scratch directory on this host is removed, and only it; symlinks inside are removed, not followed", () => {
  const tmp = tempDir();
  const outside = tempDir();
  fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep');
  const dead = scratch(tmp, RUN);
  fs.symlinkSync(outside, path.join(dead, 'to-dir'));
  fs.symlinkSync(path.join(outside, 'keep.txt'), path.join(dead, 'unit-Qw12er', 'to-file'));
  const other = scratch(tmp, OTHER);
  const longer = path.join(tmp, `nyl-run-${RUN}-aB3xY9-more`);
  fs.mkdirSync(longer);
  const result = removeDeadScratch([recorded(RUN)], here(tmp));
  assert.deepEqual(result, { removed: [{ run: RUN, dir: dead }], problems: [] });
  assert.equal(fs.existsSync(dead), false);
  assert.deepEqual(fs.readdirSync(outside), ['keep.txt'], 'what the symlinks point to is untouched');
  assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'keep');
  assert.ok(fs.existsSync(other), "another run's directory stays");
  assert.ok(fs.existsSync(longer), 'a name that is not exactly nyl-run-<run>-XXXXXX stays');
});

test('kept: a run recorded on another host, one whose process still runs here, one without a readable record, a symlink named like a scratch directory', () => {
  const tmp = tempDir();
  const outside = tempDir();
  fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep');
  const elsewhere = scratch(tmp, RUN, 'aaaaaa');
  assert.deepEqual(removeDeadScratch([recorded(RUN, { host: `not-${os.hostname()}`, pid: DEAD_PID })], here(tmp)), { removed: [], problems: [] });
  assert.deepEqual(removeDeadScratch([recorded(RUN, { host: os.hostname(), pid: 4242 })], here(tmp, [4242])), { removed: [], problems: [] });
  assert.deepEqual(removeDeadScratch([{ run: RUN }], here(tmp)), { removed: [], problems: [] });
  assert.ok(fs.existsSync(elsewhere));
  fs.rmSync(elsewhere, { recursive: true });
  const link = path.join(tmp, `nyl-run-${RUN}-bbbbbb`);
  fs.symlinkSync(outside, link);
  assert.deepEqual(removeDeadScratch([recorded(RUN)], here(tmp)), { removed: [], problems: [] });
  assert.ok(fs.lstatSync(link).isSymbolicLink());
  assert.deepEqual(fs.readdirSync(outside), ['keep.txt']);
});

test('a run id that is no UUID matches nothing; a missing temporary directory is no problem', () => {
  const tmp = tempDir();
  fs.mkdirSync(path.join(tmp, 'nyl-run-..-aaaaaa'));
  fs.mkdirSync(path.join(tmp, 'nyl-run-x-aaaaaa'));
  assert.deepEqual(removeDeadScratch([recorded('..'), recorded('x')], here(tmp)), { removed: [], problems: [] });
  assert.equal(fs.readdirSync(tmp).length, 2);
  assert.deepEqual(removeDeadScratch([recorded(RUN)], here(path.join(tmp, 'none'))), { removed: [], problems: [] });
});

test('a run recorded by this very process (its pid): kept, nothing proves it dead', () => {
  const tmp = tempDir();
  const kept = scratch(tmp, RUN);
  assert.deepEqual(removeDeadScratch([recorded(RUN, { host: os.hostname(), pid: process.pid })], here(tmp, [process.pid])), { removed: [], problems: [] });
  assert.ok(fs.existsSync(kept));
});
