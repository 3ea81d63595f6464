// State surgery for tests: commits edited state documents onto a state branch with Git plumbing,
// to craft states Nyl cannot produce yet (retained tombstones, teardown requests, released
// records, deleting units) on top of what a real reconcile wrote.
//
// Every edit is one commit whose parent is the branch's tip (the branch moves fast-forward, with a
// compare-and-swap on the tip), written through a temporary index so that it works in bare
// repositories and never touches a work tree. Documents are written as YAML with sorted keys, as
// Nyl writes them; Nyl reads them back through its shape checks, so a misspelt field is damage.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { git, gitResult, tempDir } from './git-fixtures.mjs';

/** The text of `rev:file` in repo, or undefined when it does not exist. */
export function fileAt(repo, rev, file) {
  const r = gitResult(repo, 'cat-file', 'blob', `${rev}:${file}`);
  return r.status === 0 ? r.stdout : undefined;
}

/** The parsed YAML document of `rev:file` in repo, or undefined. */
export function docAt(repo, rev, file) {
  const text = fileAt(repo, rev, file);
  return text === undefined ? undefined : YAML.parse(text);
}

/** Every file path of a commit's tree (recursively), sorted. */
export function filesAt(repo, rev) {
  return git(repo, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean).sort();
}

export function toYaml(doc) {
  return YAML.stringify(doc, { sortMapEntries: true });
}

/**
 * Commits `changes` ({path: text | object | null}; an object is written as YAML, null deletes the
 * path) on top of `ref` in repo, and moves ref there only if it still points at the tip read.
 * Returns the new commit.
 */
export function commitOnRef(repo, ref, changes, message = 'test: state surgery') {
  const tip = git(repo, 'rev-parse', ref);
  const index = path.join(tempDir('nyl-surgery-'), 'index');
  const env = { GIT_INDEX_FILE: index };
  git(repo, 'read-tree', tip, { env });
  // --index-info works without a work tree (bare repositories); mode 0 removes a path.
  const lines = Object.entries(changes).map(([file, content]) => {
    if (content === null) return `0 ${'0'.repeat(40)}\t${file}\n`;
    const text = typeof content === 'string' ? content : toYaml(content);
    return `100644 ${git(repo, 'hash-object', '-w', '--stdin', { input: text })}\t${file}\n`;
  });
  if (lines.length > 0) git(repo, 'update-index', '--index-info', { env, input: lines.join('') });
  const tree = git(repo, 'write-tree', { env });
  fs.rmSync(path.dirname(index), { recursive: true, force: true });
  const commit = git(repo, 'commit-tree', tree, '-p', tip, '-m', message);
  git(repo, 'update-ref', ref, commit, tip);
  return commit;
}

/**
 * Edits unit documents of one state ref: edit(name, doc) returns the new document (null deletes
 * the file, undefined keeps it) for each unit named in `units`, read from `units/NAME.yaml` under
 * `dir` (an environment's `path`, '' for the root).
 */
export function editUnits(repo, ref, units, edit, { dir = '', message } = {}) {
  const file = (name) => (dir ? `${dir}/units/${name}.yaml` : `units/${name}.yaml`);
  const changes = {};
  for (const name of units) {
    const next = edit(name, docAt(repo, ref, file(name)));
    if (next !== undefined) changes[file(name)] = next;
  }
  return commitOnRef(repo, ref, changes, message ?? `test: edit ${units.join(', ')}`);
}

/** Points `ref` at a new commit holding `files` (no parent): a stand-in coordination ref, such as evidence or a signal. */
export function createRef(repo, ref, files = { 'note.yaml': 'test: true\n' }) {
  const index = path.join(tempDir('nyl-surgery-'), 'index');
  const env = { GIT_INDEX_FILE: index };
  const lines = Object.entries(files).map(([file, text]) => `100644 ${git(repo, 'hash-object', '-w', '--stdin', { input: text })}\t${file}\n`);
  git(repo, 'update-index', '--index-info', { env, input: lines.join('') });
  const tree = git(repo, 'write-tree', { env });
  fs.rmSync(path.dirname(index), { recursive: true, force: true });
  const commit = git(repo, 'commit-tree', tree, '-m', `test: ${ref}`);
  git(repo, 'update-ref', ref, commit, '');
  return commit;
}
