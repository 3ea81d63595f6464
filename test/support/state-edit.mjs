// Edits of state made by hand, as a test needs state that no Nyl command produces yet (a retained
// tombstone, a pending teardown, a released record) or a change outside Nyl: one new commit on a
// state ref whose tree is the old one with one file changed, written with Git plumbing only.
//
// Invariants:
// - The ref only moves forward: the new commit's parent is the old tip, and update-ref checks the
//   old value, so an edit never rewrites history and fails loudly if the ref moved meanwhile.
// - Nothing but the objects and the one ref changes: the temporary index lives in a temp dir, so
//   bare repositories and checkouts (and their own index) are left alone.
// - YAML documents are written by Nyl's own emitter (dist/state/documents.js, sorted keys), so an
//   edited file reads as one Nyl wrote; run the build first, as every end-to-end test does.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { toYaml } from '../../dist/state/documents.js';
import { git, gitResult, tempDir, ZERO_OID } from './git-fixtures.mjs';

export const DESIRED_REF = (env = 'dev') => `refs/heads/nyl/${env}/desired`;
export const OBSERVED_REF = (env = 'dev') => `refs/heads/nyl/${env}/observed`;

/** The text of rev:file in repo, or undefined when there is no such file. */
function readFile(repo, rev, file) {
  const r = gitResult(repo, 'cat-file', 'blob', `${rev}:${file}`);
  return r.status === 0 ? r.stdout : undefined;
}

/**
 * Commits a change of one file on top of ref in repo and moves ref to it; returns the new commit.
 * change(text) gets the file's text (undefined when absent) and returns the new text, or null to
 * remove the file. Paths are relative to the ref's root (prefix the environment's state.path).
 */
export function editStateFile(repo, ref, file, change, { message = `hand edit of ${file}` } = {}) {
  const tip = git(repo, 'rev-parse', '--verify', `${ref}^{commit}`);
  const text = change(readFile(repo, tip, file));
  // A temporary index: a bare repository has none, and a checkout's must stay as it is.
  const env = { GIT_INDEX_FILE: path.join(tempDir('nyl-index-'), 'index') };
  git(repo, 'read-tree', tip, { env });
  // --index-info, not --force-remove: that one wants a work tree, which a bare repository lacks.
  // Mode 0 removes the entry.
  const entry = text === null ? `0 ${ZERO_OID}` : `100644 ${git(repo, 'hash-object', '-w', '--stdin', { input: text })}`;
  git(repo, 'update-index', '--index-info', { env, input: `${entry}\t${file}\n` });
  const tree = git(repo, 'write-tree', { env });
  const commit = git(repo, 'commit-tree', tree, '-p', tip, '-m', message);
  git(repo, 'update-ref', ref, commit, tip);
  fs.rmSync(path.dirname(env.GIT_INDEX_FILE), { recursive: true, force: true });
  return commit;
}

/**
 * editStateFile for a YAML document: change(doc) gets the parsed document (undefined when absent)
 * and returns the new one (it may change doc in place and return it), or null to remove the file.
 */
export function editStateDoc(repo, ref, file, change, options) {
  return editStateFile(
    repo,
    ref,
    file,
    (text) => {
      const next = change(text === undefined ? undefined : YAML.parse(text));
      return next === null ? null : toYaml(next);
    },
    options,
  );
}

/**
 * Sets the lifecycle state of unit's desired document, as a deletion under `policy` would leave
 * it: `retained` (a tombstone) or `pending-teardown`, with the deletion block a run records.
 */
export function setLifecycle(repo, unit, state, { env = 'dev', policy = state === 'retained' ? 'Retain' : 'Teardown', since = '2026-01-01T00:00:00Z' } = {}) {
  return editStateDoc(repo, DESIRED_REF(env), `units/${unit}.yaml`, (doc) => {
    if (!doc) throw new Error(`${DESIRED_REF(env)} of ${repo} has no desired document of ${unit}`);
    return { ...doc, lifecycle: { state }, deletion: { cause: 'source', policy, since } };
  });
}

/**
 * Makes unit a released record, as deletionPolicy Release leaves it: its desired file removed,
 * and `released: {at, run, by}` added to its observed file. Two commits, one per state ref.
 */
export function releaseUnit(
  repo,
  unit,
  { env = 'dev', at = '2026-01-01T00:00:00Z', run = '01900000-0000-7000-8000-000000000001', by = 'Test User <test@example.com>' } = {},
) {
  editStateDoc(repo, DESIRED_REF(env), `units/${unit}.yaml`, () => null);
  return editStateDoc(repo, OBSERVED_REF(env), `units/${unit}.yaml`, (doc) => {
    if (!doc) throw new Error(`${OBSERVED_REF(env)} of ${repo} has no observed document of ${unit}`);
    return { ...doc, released: { at, run, by } };
  });
}
