// Where a known secret or key leaks to: the needles to look for, a poller of every process's
// command line, and searches over printed text, a directory tree and a Git repository. Each search
// returns hits that say exactly where ({where, location, needle, context}); formatHits() lists
// them for an assertion message. A hit's context shows the bytes around it with every needle
// replaced by its name (<secret>, <key>), so that a failing test does not print what it guards.
//
// Needles (makeNeedles): each known value in plain form (its text; a key also as its raw bytes)
// and in base64. A value inside a larger base64 text is encoded one of three ways, by its offset
// modulo 3, so each offset gives a needle: the part of the encoding that only the value's own
// bytes decide (the whole encoding but its first and last group of 4 characters, at most).
//
// The poller (startCmdlinePoller) runs in a worker thread, so that it keeps polling while the test
// blocks in spawnSync: it reads /proc/<pid>/cmdline of every process (NUL-separated argv, the
// test's own process and its children included) every intervalMs (20 by default), ignores
// processes that vanish while it reads, and keeps each distinct (pid, argv, needle) once. A
// process that holds a needle for less than the interval may be missed: the poller samples.
//
// The tree search (searchTree) reads every regular file under a directory, follows no symlink,
// passes over special files (sockets, FIFOs, devices) and lists what it could not read. The Git
// search (searchGitRepo) reads every object of a repository, reachable or not, decompressed
// (`git cat-file --batch-all-objects --batch`), and names a hit's object by id and type, with the
// commits and paths that hold it (found through the trees and commits themselves, so that an
// unreachable object is placed too: a deleted run ref's checkpoint) and the refs that reach those
// commits; its files (packed-refs, config, logs) are searched as a tree too.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** The three base64 encodings of `bytes` inside a longer text, each cut to the part only `bytes` decide. */
export function base64Cores(bytes) {
  const cores = new Set();
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const start = shift === 0 ? 0 : 4;
    const end = Math.floor((shift + bytes.length) / 3) * 4;
    if (end - start >= 8) cores.add(encoded.slice(start, end));
  }
  return [...cores];
}

/**
 * The needles of known values: [{name, text, raw?}] (raw: bytes that are the value too, such as a
 * key's 32 bytes when text is its base64). Returns [{name, form, bytes}], form 'plain', 'raw bytes'
 * or 'base64'.
 */
export function makeNeedles(values) {
  const needles = [];
  for (const { name, text, raw } of values) {
    const plain = Buffer.from(text, 'utf8');
    needles.push({ name, form: 'plain', bytes: plain });
    if (raw) needles.push({ name, form: 'raw bytes', bytes: Buffer.from(raw) });
    for (const core of base64Cores(plain)) needles.push({ name, form: 'base64', bytes: Buffer.from(core) });
  }
  return needles;
}

/** How a hit names its needle: "secret (plain)". */
export const needleLabel = (n) => `${n.name} (${n.form})`;

/** The needles found in bytes: [{needle, at}] (the first occurrence of each). */
export function findNeedles(bytes, needles) {
  const found = [];
  for (const needle of needles) {
    const at = bytes.indexOf(needle.bytes);
    if (at >= 0) found.push({ needle, at });
  }
  return found;
}

/** Bytes with every needle replaced by <name>, as printable text on one line (NUL as a space, newline as \n, other control bytes as \xNN). */
export function redact(bytes, needles) {
  let text = Buffer.from(bytes).toString('latin1');
  // Longest first, so that a needle inside another is replaced with it.
  for (const n of [...needles].sort((a, b) => b.bytes.length - a.bytes.length)) text = text.split(n.bytes.toString('latin1')).join(`<${n.name}>`);
  return text
    .replace(/\0/g, ' ')
    .replace(/\n/g, '\\n')
    .replace(/[\x01-\x08\x0b-\x1f\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The context of a hit: up to `width` bytes either side, redacted, on one line. */
function contextOf(bytes, at, length, needles, width = 80) {
  const from = Math.max(0, at - width);
  const to = Math.min(bytes.length, at + length + width);
  return `${from > 0 ? '...' : ''}${redact(bytes.subarray(from, to), needles)}${to < bytes.length ? '...' : ''}`;
}

/** Hits of needles in bytes at one location. */
function hitsIn(bytes, needles, where, location) {
  return findNeedles(bytes, needles).map(({ needle, at }) => ({
    where,
    location,
    needle: needleLabel(needle),
    context: contextOf(bytes, at, needle.bytes.length, needles),
  }));
}

/** Hits in what a command printed: label names the command and the stream. */
export function searchText(label, text, needles) {
  return hitsIn(Buffer.from(text ?? '', 'utf8'), needles, 'output', label);
}

/**
 * Hits in every regular file under dir (symlinks not followed, special and unreadable files
 * skipped): {hits, files, skipped}. A missing dir holds nothing.
 */
export function searchTree(dir, needles, { where = 'file' } = {}) {
  const out = { hits: [], files: 0, skipped: [] };
  const walk = (d) => {
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (error) {
      if (error.code !== 'ENOENT') out.skipped.push(`${d} (${error.code})`);
      return;
    }
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        let bytes;
        try {
          bytes = fs.readFileSync(full);
        } catch (error) {
          if (error.code !== 'ENOENT') out.skipped.push(`${full} (${error.code})`);
          continue;
        }
        out.files++;
        out.hits.push(...hitsIn(bytes, needles, where, full));
      }
    }
  };
  walk(dir);
  return out;
}

function gitRun(repo, args, { input, encoding = 'buffer' } = {}) {
  // Only this repository: no inherited GIT_DIR and the like, no configuration of the machine.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_')));
  const r = spawnSync('git', args, {
    cwd: repo,
    input,
    encoding,
    env: { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    maxBuffer: 1 << 30,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${repo} exited ${r.status}: ${String(r.stderr)}`);
  return r.stdout;
}

/** Is dir a Git repository's directory (bare, or a clone's .git)? */
export function isGitDir(dir) {
  return fs.existsSync(path.join(dir, 'objects')) && fs.existsSync(path.join(dir, 'HEAD')) && fs.existsSync(path.join(dir, 'refs'));
}

/** The Git directories under root (root itself included), not looking inside one once found. */
export function gitDirsUnder(root) {
  const found = [];
  const walk = (d) => {
    if (isGitDir(d)) return void found.push(d);
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory() && !e.isSymbolicLink()) walk(path.join(d, e.name));
  };
  walk(root);
  return found;
}

/** Every object of the repository, reachable or not, decompressed: [{oid, type, body}]. */
export function gitObjects(repo) {
  const all = gitRun(repo, ['cat-file', '--batch-all-objects', '--batch', '--unordered']);
  const objects = [];
  for (let at = 0; at < all.length; ) {
    const eol = all.indexOf(0x0a, at);
    const [oid, type, size] = all.subarray(at, eol).toString('latin1').split(' ');
    objects.push({ oid, type, body: all.subarray(eol + 1, eol + 1 + Number(size)) });
    at = eol + 1 + Number(size) + 1;
  }
  return objects;
}

/** commit oid -> the refs that reach it. */
function refsReaching(repo) {
  const map = new Map();
  const refs = String(gitRun(repo, ['for-each-ref', '--format=%(refname)'], { encoding: 'utf8' }))
    .split('\n')
    .filter(Boolean);
  for (const ref of refs) {
    for (const commit of String(gitRun(repo, ['rev-list', ref], { encoding: 'utf8' }))
      .split('\n')
      .filter(Boolean)) {
      if (!map.has(commit)) map.set(commit, []);
      map.get(commit).push(ref);
    }
  }
  return map;
}

/**
 * Where objects stand, from the objects themselves (so that unreachable ones are placed too):
 * {parents: oid -> [{tree, name}], commitsOf: tree oid -> [{commit, subject}], subjects: commit -> subject}.
 */
function objectIndex(objects) {
  const parents = new Map();
  const commitsOf = new Map();
  const subjects = new Map();
  const push = (map, k, v) => (map.has(k) ? map.get(k).push(v) : map.set(k, [v]));
  for (const o of objects) {
    if (o.type === 'tree') {
      const width = o.oid.length / 2;
      for (let i = 0; i < o.body.length; ) {
        const nul = o.body.indexOf(0, i);
        const name = o.body.subarray(o.body.indexOf(0x20, i) + 1, nul).toString('utf8');
        push(parents, o.body.subarray(nul + 1, nul + 1 + width).toString('hex'), { tree: o.oid, name });
        i = nul + 1 + width;
      }
    } else if (o.type === 'commit') {
      const text = o.body.toString('utf8');
      const tree = /^tree ([0-9a-f]+)/.exec(text)?.[1];
      const subject = text.slice(text.indexOf('\n\n') + 2).split('\n')[0];
      subjects.set(o.oid, subject);
      if (tree) push(commitsOf, tree, { commit: o.oid, subject });
    }
  }
  return { parents, commitsOf, subjects };
}

/** The commits (and paths in them) that hold an object: [{commit, path, subject}], up to `max`. */
function placesOf(oid, type, index, max = 4) {
  if (type === 'commit') return [{ commit: oid, path: '', subject: index.subjects.get(oid) ?? '' }];
  const places = [];
  const queue = [{ oid, path: '' }];
  const seen = new Set();
  while (queue.length > 0 && places.length < max) {
    const { oid: at, path: below } = queue.shift();
    if (seen.has(`${at}:${below}`)) continue;
    seen.add(`${at}:${below}`);
    for (const c of index.commitsOf.get(at) ?? []) places.push({ commit: c.commit, path: below, subject: c.subject });
    for (const p of index.parents.get(at) ?? []) queue.push({ oid: p.tree, path: below ? `${p.name}/${below}` : p.name });
  }
  return places;
}

/**
 * A function that names an object of the repository and where it stands:
 * `<type> <oid> in <commit>:<path> "<subject>" (<refs that reach the commit>, or unreachable)`.
 * objects: gitObjects(repo).
 */
export function objectPlacer(repo, objects) {
  const index = objectIndex(objects);
  const reach = refsReaching(repo);
  return (oid, type) => {
    const places = placesOf(oid, type, index).map(
      (p) => `${p.commit.slice(0, 12)}${p.path ? `:${p.path}` : ''} "${p.subject}" (${(reach.get(p.commit) ?? ['unreachable']).join(', ')})`,
    );
    return `${type} ${oid}${places.length > 0 ? ` in ${places.join('; ')}` : ' (in no commit)'}`;
  };
}

/**
 * Hits in every object of the Git repository at repo (its git dir, or a work tree), reachable or
 * not, and in its git dir's files. A hit's location names the object (type and id) and where it
 * stands: `<commit>:<path> "<subject>" (<refs that reach the commit>, or unreachable)`. Returns
 * {hits, objects}.
 */
export function searchGitRepo(repo, needles, { label = repo } = {}) {
  const hits = [];
  const found = [];
  const objects = gitObjects(repo);
  for (const { oid, type, body } of objects) {
    for (const { needle, at: where } of findNeedles(body, needles))
      found.push({ oid, type, needle, context: contextOf(body, where, needle.bytes.length, needles) });
  }
  if (found.length > 0) {
    const place = objectPlacer(repo, objects);
    for (const f of found) hits.push({ where: 'git', location: `${label}: ${place(f.oid, f.type)}`, needle: needleLabel(f.needle), context: f.context });
  }
  const gitDir = path.resolve(repo, String(gitRun(repo, ['rev-parse', '--git-dir'], { encoding: 'utf8' })).trim());
  hits.push(...searchTree(gitDir, needles, { where: 'git file' }).hits);
  return { hits, objects: objects.length };
}

/**
 * Starts polling the command line of every process: {stop(): Promise<{hits, scans, processes}>}.
 * Each hit: {where: 'process', location: 'pid P (parent Q COMM): ARGV0', needle, context: the
 * whole argv, redacted}.
 */
export function startCmdlinePoller(needles, { intervalMs = 20 } = {}) {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { leakPoller: true, flag, intervalMs, needles: needles.map((n) => ({ name: n.name, form: n.form, bytes: new Uint8Array(n.bytes) })) },
  });
  worker.unref();
  const result = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the cmdline poller exited (${code}) before it reported`)));
  });
  result.catch(() => {});
  let stopped;
  return {
    stop() {
      stopped ??= (async () => {
        worker.ref();
        const f = new Int32Array(flag);
        Atomics.store(f, 0, 1);
        Atomics.notify(f, 0);
        try {
          return await result;
        } finally {
          await worker.terminate();
        }
      })();
      return stopped;
    },
  };
}

/**
 * A process's argv for a hit: its first elements, then (numbered) those that hold a needle,
 * redacted. An argv that sets an environment with env(1) (`env -i -- NAME=VALUE... program...`,
 * directly or behind a shell) also names the program it runs and its NYL_UNIT.
 */
function argvContext(argv, needles) {
  const show = (a) => redact(Buffer.from(a, 'latin1'), needles);
  const head = argv.slice(0, 4).map(show).join(' ');
  const holding = argv.map((a, i) => [a, i]).filter(([a, i]) => i >= 4 && findNeedles(Buffer.from(a, 'latin1'), needles).length > 0);
  let runs = '';
  const dashes = argv.findIndex((a, i) => a === '--' && i > 0 && argv[i - 1] === '-i' && /(^|\/)env$/.test(argv[i - 2] ?? ''));
  if (dashes >= 0) {
    let at = dashes + 1;
    while (at < argv.length && /^[^=]+=/.test(argv[at])) at++;
    const unit = argv.slice(dashes + 1, at).find((a) => a.startsWith('NYL_UNIT='));
    const program = argv
      .slice(at, at + 3)
      .map(show)
      .join(' ');
    runs = ` | env(1) runs: ${program.length > 100 ? `${program.slice(0, 100)}...` : program}${unit ? ` (${show(unit)})` : ''}`;
  }
  return `argv[0..3]: ${head}${holding.length > 0 ? ` | ${holding.map(([a, i]) => `argv[${i}]: ${show(a)}`).join(' | ')}` : ''}${runs} (${argv.length} elements)`;
}

/** The worker: scans until the flag is set, then posts what it found. */
function pollInWorker() {
  const { flag, intervalMs } = workerData;
  const needles = workerData.needles.map((n) => ({ ...n, bytes: Buffer.from(n.bytes) }));
  const f = new Int32Array(flag);
  const seen = new Map();
  const pids = new Set();
  let scans = 0;
  const statOf = (pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return { comm, ppid };
    } catch {
      return undefined;
    }
  };
  const scan = () => {
    let entries;
    try {
      entries = fs.readdirSync('/proc');
    } catch {
      return;
    }
    for (const pid of entries) {
      if (!/^\d+$/.test(pid)) continue;
      let cmdline;
      try {
        cmdline = fs.readFileSync(`/proc/${pid}/cmdline`);
      } catch {
        continue; // gone meanwhile, or not ours to read
      }
      pids.add(pid);
      const found = findNeedles(cmdline, needles);
      if (found.length === 0) continue;
      const argv = cmdline.toString('latin1').replace(/\0$/, '').split('\0');
      const stat = statOf(pid);
      const parent = stat ? statOf(stat.ppid) : undefined;
      for (const { needle } of found) {
        const key = `${pid}\0${needleLabel(needle)}\0${cmdline.toString('latin1')}`;
        if (seen.has(key)) continue;
        seen.set(key, {
          where: 'process',
          location: `pid ${pid} (parent ${stat?.ppid ?? '?'} ${parent?.comm ?? '?'}): ${argv[0]}`,
          needle: needleLabel(needle),
          context: argvContext(argv, needles),
        });
      }
    }
  };
  while (Atomics.load(f, 0) === 0) {
    scan();
    scans++;
    Atomics.wait(f, 0, 0, intervalMs);
  }
  scan();
  scans++;
  parentPort.postMessage({ hits: [...seen.values()], scans, processes: pids.size });
}

/** The hits as a list, grouped by where, for an assertion message. */
export function formatHits(hits) {
  if (hits.length === 0) return 'no hits';
  const groups = new Map();
  for (const h of hits) {
    if (!groups.has(h.where)) groups.set(h.where, []);
    groups.get(h.where).push(h);
  }
  const lines = [`${hits.length} hit(s):`];
  for (const [where, list] of groups) {
    lines.push(`  ${where} (${list.length}):`);
    for (const h of list) lines.push(`    ${h.needle} in ${h.location}`, `      ${h.context.length > 600 ? `${h.context.slice(0, 600)}...` : h.context}`);
  }
  return lines.join('\n');
}

if (!isMainThread && workerData?.leakPoller) pollInWorker();
