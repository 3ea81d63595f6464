// A snapshot of what an operator reads: the text of a typical `nyl reconcile` (stdout and the
// progress lines on stderr), `nyl status` and `nyl log` of the example project examples/shop,
// compared with test/e2e/snapshots/typical-output.txt after the parts that differ from run to
// run (ids, commits, times, durations, paths) are replaced by placeholders. A change to the text
// fails here until the snapshot is written again and the new text reviewed for readability:
//
//   NYL_UPDATE_SNAPSHOTS=1 node --test test/e2e/output-snapshot.test.mjs && git diff test/e2e/snapshots
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, tempDir } from '../support/git-fixtures.mjs';
import { nyl } from '../support/cli.mjs';

after(cleanupAll);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SNAPSHOT = path.join(HERE, 'snapshots', 'typical-output.txt');
const SHOP = path.join(HERE, '..', '..', 'examples', 'shop');

/** The example project with its state in a new bare repository. */
function shop() {
  const bare = makeBareRepo();
  const dir = path.join(tempDir('nyl-snapshot-'), 'shop');
  fs.cpSync(SHOP, dir, { recursive: true });
  const file = path.join(dir, 'nyl.yaml');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('STATE_REPO_URL', pathToFileURL(bare).href));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'shop');
  return { dir, bare };
}

/** Replaces what differs from run to run by numbered placeholders, in order of first appearance. */
function normalize(text, paths) {
  const seen = new Map();
  const numbered = (kind) => (value) => {
    const key = `${kind}:${value}`;
    if (!seen.has(key)) seen.set(key, `<${kind}-${[...seen.keys()].filter((k) => k.startsWith(`${kind}:`)).length + 1}>`);
    return seen.get(key);
  };
  let out = text;
  for (const [p, name] of paths) out = out.replaceAll(p, name);
  return out
    .replace(/sha256:[0-9a-f]{64}/g, 'sha256:<digest>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, numbered('id'))
    .replace(/\b[0-9a-f]{40}\b/g, numbered('commit'))
    .replace(/\b(desired|observed) [0-9a-f]{7,12}\b/g, '$1 <short>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>')
    .replace(/\b\d+(?:\.\d+)?m?s\b/g, '<duration>');
}

test('the text of a typical reconcile, status and log reads as the reviewed snapshot', () => {
  const { dir, bare } = shop();
  const steps = [];
  const run = (args, exit = 0) => {
    const r = nyl(dir, args);
    assert.equal(r.code, exit, `nyl ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    steps.push(`$ nyl ${args.join(' ')}\n${r.stdout}${r.stderr ? `--- stderr\n${r.stderr}` : ''}`);
  };
  assert.equal(nyl(dir, ['state', 'init', '-e', 'dev']).code, 0);
  run(['reconcile', '-e', 'dev', '--concurrency', '1']);
  run(['status', '-e', 'dev']);
  run(['log', '-e', 'dev']);
  const actual = normalize(steps.join('\n'), [
    [bare, '<state-repository>'],
    [pathToFileURL(bare).href, '<state-url>'],
    [dir, '<project>'],
  ]);
  if (process.env.NYL_UPDATE_SNAPSHOTS === '1') {
    fs.mkdirSync(path.dirname(SNAPSHOT), { recursive: true });
    fs.writeFileSync(SNAPSHOT, actual);
  }
  assert.equal(actual, fs.readFileSync(SNAPSHOT, 'utf8'), 'the text changed: review it, then NYL_UPDATE_SNAPSHOTS=1 writes the snapshot again');
});
