// End-to-end: state written by the previous version (form 1: strings JSON-quoted, every receipt
// with a copy of its desired document) is read as it is, left alone by commands that write
// nothing, and migrated to form 2 by the first command that writes: every unit document of both
// refs then says formatVersion: 2, scripts are literal blocks, and each receipt refers to its
// desired document by the blob id of that document's file on the desired ref. The fixture
// (test/fixtures/state-format-1/) is the state a previous version wrote for its nyl.yaml.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import YAML from 'yaml';
import { cleanupAll, commitTree, git, makeBareRepo, makeProject } from '../support/git-fixtures.mjs';
import { nyl } from '../support/cli.mjs';

after(cleanupAll);

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'state-format-1');
const DESIRED = 'refs/heads/nyl/dev/desired';
const OBSERVED = 'refs/heads/nyl/dev/observed';

function filesOf(dir) {
  const out = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    out[path.relative(dir, full)] = fs.readFileSync(full, 'utf8');
  }
  return out;
}

/** A state repository holding the fixture's state, and a project of the fixture's nyl.yaml pointing at it. */
function formOneState() {
  const bare = makeBareRepo();
  for (const [side, ref] of [
    ['desired', DESIRED],
    ['observed', OBSERVED],
  ]) {
    const commit = commitTree(bare, filesOf(path.join(FIXTURE, side)), { message: 'nyl: reconcile dev (database, migrate)' });
    git(bare, 'update-ref', ref, commit);
  }
  const yaml = fs.readFileSync(path.join(FIXTURE, 'nyl.yaml'), 'utf8').replace('STATE_REPO_URL', pathToFileURL(bare).href);
  return { bare, project: makeProject({ 'nyl.yaml': yaml }) };
}

const show = (bare, ref, file) => git(bare, 'show', `${ref}:${file}`);

test('state of the previous form is read as it is, and migrated by the first command that writes', () => {
  const { bare, project } = formOneState();
  const status = nyl(project, ['status', '-e', 'dev', '-o', 'json']);
  assert.equal(status.code, 0, status.stderr);
  assert.deepEqual(
    Object.values(status.json.units).map((u) => u.state),
    ['current', 'current'],
  );

  const before = git(bare, 'for-each-ref');
  const noop = nyl(project, ['reconcile', '-e', 'dev']);
  assert.equal(noop.code, 0, noop.stderr);
  assert.equal(git(bare, 'for-each-ref'), before, 'a command that writes nothing migrates nothing');

  const hold = nyl(project, ['hold', '-e', 'dev', '--unit', 'migrate', '--reason', 'migrate the state format']);
  assert.equal(hold.code, 0, hold.stderr);
  for (const ref of [DESIRED, OBSERVED]) {
    for (const unit of ['database', 'migrate']) assert.match(show(bare, ref, `units/${unit}.yaml`), /^formatVersion: 2$/m, `${ref} ${unit}`);
  }
  assert.match(git(bare, 'log', '-1', '--format=%s', DESIRED), /\(migrate\)$/, 'the headline names the held unit, not the migrated ones');
  const database = show(bare, DESIRED, 'units/database.yaml');
  assert.match(database, /^ {2}script: \|\n {4}echo "provisioning the database"\n/m, 'a script is a literal block');
  const observed = YAML.parse(show(bare, OBSERVED, 'units/database.yaml'));
  assert.equal(observed.receipt.desired, undefined, 'no copy of the desired document');
  assert.equal(observed.receipt.desiredBlob, git(bare, 'rev-parse', `${DESIRED}:units/database.yaml`), 'the blob of the desired file');

  // Read back in form 2, the units are as current as before; resumed, nothing runs again.
  assert.equal(nyl(project, ['resume', '-e', 'dev', '--unit', 'migrate']).code, 0);
  const again = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(
    Object.values(again.json.units).map((u) => u.result),
    ['current', 'current'],
  );
});
