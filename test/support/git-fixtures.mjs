// Hermetic git fixtures for tests: temp dirs with cleanup, a `git` runner whose environment
// ignores the machine's git configuration, throwaway projects and bare remotes, and a
// pre-receive hook that protects state branches the way a Git host's branch protection does.
//
// Invariants:
// - Every git process started through this module (and every CLI run that uses `hermeticEnv()`)
//   reads only the temp global config written here: no system config, no ~/.gitconfig.
// - Author and committer dates are fixed, so commit ids of identical trees and messages are exact.
// - Everything created by `tempDir` is removed by `cleanupAll()` and, as a fallback, at process exit.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ZERO_OID = '0'.repeat(40);
export const FIXED_DATE = '1767225600 +0000'; // 2026-01-01T00:00:00Z

const registered = new Set();
let configDir = null;

/** Creates a fresh directory under os.tmpdir() and registers it for cleanup. */
export function tempDir(prefix = 'nyl-test-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  registered.add(dir);
  return dir;
}

/** Removes every directory created by tempDir (and the hermetic config dir). */
export function cleanupAll() {
  for (const dir of registered) {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
  registered.clear();
  configDir = null;
}

/** Runs fn(dir) with a fresh temp dir that is removed afterwards (fn may be async). */
export async function withTempDir(prefix, fn) {
  const dir = tempDir(prefix);
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    registered.delete(dir);
  }
}

// Child processes started detached (their own process group) by the test support modules.
const groups = new Set();

/**
 * Registers a child spawned with `detached: true` so that its whole process group is killed when
 * the test process exits or is interrupted (SIGINT/SIGTERM/SIGHUP), even if a test forgot stop().
 */
export function trackProcessGroup(child) {
  groups.add(child);
  child.once('exit', () => groups.delete(child));
  return child;
}

/** Sends signal to the process group of a child spawned detached (falls back to the child). */
export function killProcessGroup(child, signal = 'SIGTERM') {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    try {
      return child.kill(signal);
    } catch {
      return false;
    }
  }
}

function lastRites() {
  for (const child of groups) killProcessGroup(child, 'SIGKILL');
  groups.clear();
  for (const dir of registered) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* best effort at exit */
    }
  }
}

process.on('exit', lastRites);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  const onSignal = () => {
    lastRites();
    process.removeListener(signal, onSignal);
    // Why: keep the default behaviour (terminate by that signal) unless someone else handles it.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.on(signal, onSignal);
}

function globalConfigPath() {
  if (configDir && fs.existsSync(path.join(configDir, 'gitconfig'))) return path.join(configDir, 'gitconfig');
  configDir = tempDir('nyl-gitconfig-');
  const file = path.join(configDir, 'gitconfig');
  fs.writeFileSync(
    file,
    [
      '[user]',
      '\tname = Test User',
      '\temail = test@example.com',
      '[init]',
      '\tdefaultBranch = main',
      '[protocol "file"]',
      '\tallow = always',
      '[commit]',
      '\tgpgsign = false',
      '[tag]',
      '\tgpgsign = false',
      '[core]',
      '\tautocrlf = false',
      '[gc]',
      '\tauto = 0',
      '[advice]',
      '\tdetachedHead = false',
      '[safe]',
      '\tdirectory = *',
      '',
    ].join('\n'),
  );
  return file;
}

// Variables that would point git at another repository or config, or route 127.0.0.1 via a proxy.
const SCRUBBED = /^(GIT_(?!SSL_CAINFO$).*|http_proxy|https_proxy|HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|all_proxy)$/;

/**
 * The environment every git process (and every CLI run under test) should get.
 * `extra` is merged last; a value of undefined removes the variable.
 */
export function hermeticEnv(extra = {}) {
  const globalConfig = globalConfigPath();
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!SCRUBBED.test(k)) env[k] = v;
  Object.assign(env, {
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_CONFIG_NOSYSTEM: '1',
    // Why: git also reads $XDG_CONFIG_HOME/git/{config,ignore,attributes}; point it at our dir.
    XDG_CONFIG_HOME: path.dirname(globalConfig),
    GIT_AUTHOR_DATE: FIXED_DATE,
    GIT_COMMITTER_DATE: FIXED_DATE,
    GIT_TERMINAL_PROMPT: '0',
    // Why: git messages ("stale info", "hook declined") are translated under other locales.
    LC_ALL: 'C',
    LANGUAGE: 'C',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = String(v);
  }
  return env;
}

function splitOptions(args) {
  const last = args[args.length - 1];
  if (last !== null && typeof last === 'object' && !Array.isArray(last)) {
    return { argv: args.slice(0, -1), opts: last };
  }
  return { argv: args, opts: {} };
}

/**
 * Runs git synchronously in cwd; returns trimmed stdout; throws (with stderr in the message and
 * .status/.stdout/.stderr/.argv on the error) when git exits non-zero.
 * A trailing plain object is taken as options: { input, env }.
 */
export function git(cwd, ...args) {
  const { argv, opts } = splitOptions(args);
  try {
    return execFileSync('git', argv, {
      cwd,
      env: hermeticEnv(opts.env),
      input: opts.input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    }).trim();
  } catch (err) {
    const stderr = String(err.stderr ?? '').trim();
    const e = new Error(`git ${argv.join(' ')} failed in ${cwd} (exit ${err.status}): ${stderr}`);
    Object.assign(e, { status: err.status, stdout: String(err.stdout ?? ''), stderr, argv });
    throw e;
  }
}

/**
 * Like git() but never throws: returns { status, stdout, stderr } (untrimmed) for asserting on
 * failures such as rejected pushes.
 */
export function gitResult(cwd, ...args) {
  const { argv, opts } = splitOptions(args);
  const r = spawnSync('git', argv, {
    cwd,
    env: hermeticEnv(opts.env),
    input: opts.input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Creates a non-bare repository with `files` (relative paths, subdirectories allowed) committed on
 * main in one commit "initial", optionally with `origin` as remote. Returns its path.
 */
export function makeProject(files = {}, { origin, message = 'initial' } = {}) {
  const dir = tempDir('nyl-project-');
  git(dir, 'init', '-q', '-b', 'main');
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', message);
  if (origin) git(dir, 'remote', 'add', 'origin', origin);
  return dir;
}

/** Creates (git init --bare) a bare repository at dir, or in a new temp dir. Returns its path. */
export function makeBareRepo(dir) {
  const target = dir ?? path.join(tempDir('nyl-remote-'), 'state.git');
  fs.mkdirSync(target, { recursive: true });
  git(target, 'init', '-q', '--bare', '-b', 'main');
  return target;
}

function shQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/**
 * Installs hooks/pre-receive in bareDir that refuses deletions and non-fast-forward updates of
 * refs starting with one of `patterns` (plain prefixes), like a host's protected-branch rule.
 * Other refs are left unrestricted. Any refusal declines the whole push.
 */
export function installProtectHook(bareDir, patterns = ['refs/heads/nyl/']) {
  const hooksDir = path.join(bareDir, 'hooks');
  fs.mkdirSync(hooksDir, { recursive: true });
  const hook = path.join(hooksDir, 'pre-receive');
  const script = `#!/bin/sh
# Installed by test/support/git-fixtures.mjs: protects refs by prefix (no deletion, no non-fast-forward).
zero=${ZERO_OID}
status=0
while read -r old new ref; do
  for p in ${patterns.map(shQuote).join(' ')}; do
    case "$ref" in
      "$p"*)
        if [ "$new" = "$zero" ]; then
          echo "nyl-protect: deletion of protected ref $ref refused" >&2
          status=1
        elif [ "$old" != "$zero" ] && ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then
          echo "nyl-protect: non-fast-forward update of protected ref $ref refused" >&2
          status=1
        fi
        ;;
    esac
  done
done
exit $status
`;
  fs.writeFileSync(hook, script, { mode: 0o755 });
  fs.chmodSync(hook, 0o755);
  return hook;
}

function writeTree(repo, files) {
  const blobs = [];
  const dirs = new Map();
  for (const [rel, content] of Object.entries(files)) {
    const [head, ...rest] = rel.split('/').filter(Boolean);
    if (rest.length === 0) blobs.push([head, content]);
    else {
      if (!dirs.has(head)) dirs.set(head, {});
      dirs.get(head)[rest.join('/')] = content;
    }
  }
  const entries = blobs.map(([name, content]) => `100644 blob ${git(repo, 'hash-object', '-w', '--stdin', { input: content })}\t${name}\n`);
  for (const [name, sub] of dirs) entries.push(`040000 tree ${writeTree(repo, sub)}\t${name}\n`);
  return git(repo, 'mktree', { input: entries.join('') });
}

/**
 * Writes a commit holding exactly `files` (relative paths, subdirectories allowed) on top of
 * `parents`, without touching any ref or the index; works in bare repositories. Returns its id.
 * With the pinned dates, the same files, parents and message give the same id.
 */
export function commitTree(repo, files = {}, { parents = [], message = 'commit' } = {}) {
  const tree = writeTree(repo, files);
  return git(repo, 'commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message);
}
