// An in-memory implementation of the state store port (src/state/store.ts), for in-process
// protocol tests: many simulated nyl processes, each with its own MemoryStateStore, share one
// MemoryRepository standing in for the state repository ("the remote").
//
// Fidelity (checked by test/conformance/state-store.test.mjs against the GitStateStore):
// - Objects are real Git objects under their real ids (sha1 of `<type> <size>\0<content>`):
//   blobs, trees in Git's binary format and order, commits in the exact text `git fast-import`
//   writes. The same CommitSpecs give the same commit ids here and in a real repository.
// - `write` is all or nothing, with the compare-and-swap rules of the Git store for the
//   location's kind:
//   * kind 'clone' (`git update-ref --stdin`): every expectation is checked; `expect: undefined`
//     is unchecked; a delete with `expect: null` throws (update-ref: "zero <oldvalue>");
//   * kinds 'path' and 'remote' (`git push --atomic --force-with-lease`): `expect: undefined`
//     throws; a ref that already holds its target value is "up to date" and its expectation is
//     NOT checked (git skips the lease of such a ref); deleting an absent ref with
//     `expect: null` succeeds and changes nothing. As in git, what is up to date and every
//     expectation are judged against the refs as the write began (the remote's advertisement,
//     taken before `beforeWrite` runs), and only the refs the write moves are checked again
//     when it applies (the remote's ref lock): a ref moved meanwhile to a value the write only
//     pushes to itself does not stop it.
// - Programming errors throw instead of returning a result: a malformed ref name (also a
//   one-level `refs/x`, which receive-pack refuses), two updates of one ref in a write, a target
//   object that does not exist, a bad `expect`. (The Git store's pushes report some of these as
//   'unreachable' or 'rejected'; a test should fail loudly on them instead.)
// - Every async method yields to the event loop (setImmediate) before it looks at or changes
//   the repository, and a write checks and applies all its updates without yielding in between.
// Not modelled: objects are shared by every store of a repository at once (in a real 'remote'
// location a process's unpushed objects live in its cache repository only); the reader accepts
// object ids (not ref names or abbreviated ids) with `^{tree}`, `^{commit}` and `:path`.

// Usage:
//   const repo = new MemoryRepository('state');
//   const a = new MemoryStateStore(repo, memoryLocation('dev'));             // process A
//   const b = new MemoryStateStore(repo, memoryLocation('dev'), {             // process B
//     beforeWrite: async (updates) => { /* delay, or move refs with repo.setRef */ },
//     unreachable: () => networkDown,
//   });

import { createHash } from 'node:crypto';
import { parseTree } from '../../dist/git/batch-reader.js';
import { fail } from '../../dist/errors/diagnostic.js';

const HEX40 = /^[0-9a-f]{40}$/;
const tick = () => new Promise((resolve) => setImmediate(resolve));

// --- Git objects ----------------------------------------------------------------------------

function hashObject(type, content) {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

const asBuffer = (content) => (typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content));

/** Git's tree order: byte order of names, a tree's name compared as if it ended with '/'. */
function treeOrder(a, b) {
  const ka = Buffer.from(a.kind === 'tree' ? `${a.name}/` : a.name, 'utf8');
  const kb = Buffer.from(b.kind === 'tree' ? `${b.name}/` : b.name, 'utf8');
  return Buffer.compare(ka, kb);
}

function identityLine(role, who, timeMs) {
  return `${role} ${who.name} <${who.email}> ${Math.floor(timeMs / 1000)} +0000\n`;
}

/** Splits a commit object into its headers and message. */
function parseCommit(content) {
  const text = content.toString('utf8');
  const cut = text.indexOf('\n\n');
  const head = cut < 0 ? text : text.slice(0, cut);
  const message = cut < 0 ? '' : text.slice(cut + 2);
  const parents = [];
  let tree;
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
  }
  return { tree, parents, message };
}

function checkRefName(ref) {
  const bad =
    typeof ref !== 'string' ||
    !/^refs\/[^/]+\/./.test(ref) || // receive-pack refuses a "funny" one-level ref such as refs/x
    ref.endsWith('/') ||
    ref.endsWith('.') ||
    ref.endsWith('.lock') ||
    ref.includes('..') ||
    ref.includes('@{') ||
    /[\x00-\x20\x7f~^:?*[\\]/.test(ref) ||
    ref.split('/').some((part) => part === '' || part.startsWith('.'));
  if (bad) throw new Error(`invalid ref name: ${JSON.stringify(ref)}`);
}

function checkPath(path) {
  if (typeof path !== 'string' || path === '' || path.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`invalid path in a commit: ${JSON.stringify(path)}`);
  }
}

/**
 * One repository: its refs and its objects. Shared by any number of MemoryStateStores.
 */
export class MemoryRepository {
  /** @param {string} [name] shown in localRepository as `memory:<name>` */
  constructor(name = 'state') {
    this.name = name;
    /** @type {Map<string, {type: string, content: Buffer}>} */
    this.objects = new Map();
    /** @type {Map<string, string>} */
    this.refMap = new Map();
    /** Successful ref writes through stores (not setRef), for tests that count pushes. */
    this.writes = 0;
  }

  // --- objects ------------------------------------------------------------------------------

  /** Stores an object and returns its Git id. */
  putObject(type, content) {
    const buf = asBuffer(content);
    const oid = hashObject(type, buf);
    if (!this.objects.has(oid)) this.objects.set(oid, { type, content: buf });
    return oid;
  }

  has(oid) {
    return this.objects.has(oid);
  }

  typeOf(oid) {
    return this.objects.get(oid)?.type;
  }

  /** Loads a tree object into a mutable node: Map name -> {kind:'blob', oid} | {kind:'tree', node}. */
  loadTree(oid) {
    const node = new Map();
    const obj = this.objects.get(oid);
    if (!obj || obj.type !== 'tree') throw new Error(`not a tree: ${oid}`);
    for (const e of parseTree(obj.content)) {
      node.set(e.name, e.type === 'tree' ? { kind: 'tree', node: this.loadTree(e.oid) } : { kind: 'blob', oid: e.oid, mode: e.mode });
    }
    return node;
  }

  /** Writes a mutable node (and its subtrees) as tree objects; returns the root tree's id. */
  storeTree(node) {
    const entries = [];
    for (const [name, entry] of node) {
      if (entry.kind === 'tree') entries.push({ name, kind: 'tree', mode: '40000', oid: this.storeTree(entry.node) });
      else entries.push({ name, kind: 'blob', mode: entry.mode ?? '100644', oid: entry.oid });
    }
    entries.sort(treeOrder);
    const parts = [];
    for (const e of entries) parts.push(Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex'));
    return this.putObject('tree', Buffer.concat(parts));
  }

  /**
   * Writes commits like `git fast-import` (src/git/object-writer.ts) and returns their ids.
   * Synchronous; stores call it after yielding. Moves no ref.
   */
  writeCommits(commits) {
    const ids = [];
    commits.forEach((c, i) => {
      let parent;
      if (c.parent !== undefined) {
        if (typeof c.parent === 'string') {
          if (!HEX40.test(c.parent) || this.typeOf(c.parent) !== 'commit') throw new Error(`commit ${i}: parent ${c.parent} is not a commit of ${this.name}`);
          parent = c.parent;
        } else {
          const at = c.parent?.index;
          if (!Number.isInteger(at) || at < 0 || at >= i) throw new Error(`commit ${i}: parent index ${String(at)} names no earlier commit of the batch`);
          parent = ids[at];
        }
      }
      const root = parent && !c.clearTree ? this.loadTree(parseCommit(this.objects.get(parent).content).tree) : new Map();
      for (const path of [...c.changes.keys()].sort()) {
        checkPath(path);
        const content = c.changes.get(path);
        if (content === null || content === undefined) removePath(root, path.split('/'));
        else setPath(root, path.split('/'), this.putObject('blob', asBuffer(content)));
      }
      const tree = this.storeTree(root);
      const merges = parent ? (c.merges ?? []) : [];
      for (const m of merges) if (!HEX40.test(m) || this.typeOf(m) !== 'commit') throw new Error(`commit ${i}: merge ${m} is not a commit of ${this.name}`);
      const text =
        `tree ${tree}\n` +
        (parent ? `parent ${parent}\n` : '') +
        merges.map((m) => `parent ${m}\n`).join('') +
        identityLine('author', c.author, c.timeMs) +
        identityLine('committer', c.author, c.timeMs) +
        '\n';
      ids.push(this.putObject('commit', Buffer.concat([Buffer.from(text, 'utf8'), asBuffer(c.message)])));
    });
    return ids;
  }

  /**
   * Resolves a spec to an object id: `<oid>`, `<oid>^{tree}`, `<oid>^{commit}`, `<rev>:<path>`
   * (`<rev>:` is the root tree); with refs, `<rev>` may also be a full ref name.
   */
  resolve(spec, { refs = false } = {}) {
    if (typeof spec !== 'string') return undefined;
    const colon = spec.indexOf(':');
    let rev = colon < 0 ? spec : spec.slice(0, colon);
    const path = colon < 0 ? undefined : spec.slice(colon + 1);
    let peel;
    const m = /^(.*)\^\{(tree|commit)\}$/.exec(rev);
    if (m) {
      rev = m[1];
      peel = m[2];
    }
    let oid;
    if (HEX40.test(rev) && this.objects.has(rev)) oid = rev;
    else if (refs && this.refMap.has(rev)) oid = this.refMap.get(rev);
    else return undefined;
    if (peel) {
      oid = this.peel(oid, peel);
      if (!oid) return undefined;
    }
    if (path === undefined) return oid;
    let tree = this.peel(oid, 'tree');
    if (!tree) return undefined;
    const parts = path.split('/').filter((p) => p !== '');
    let current = tree;
    for (const part of parts) {
      const obj = this.objects.get(current);
      if (!obj || obj.type !== 'tree') return undefined;
      const entry = parseTree(obj.content).find((e) => e.name === part);
      if (!entry) return undefined;
      current = entry.oid;
    }
    return this.objects.has(current) ? current : undefined;
  }

  peel(oid, to) {
    const type = this.typeOf(oid);
    if (type === to) return oid;
    if (to === 'tree' && type === 'commit') return parseCommit(this.objects.get(oid).content).tree;
    return undefined;
  }

  /** Reads an object like the store's reader (also by full ref name); undefined when missing. */
  read(spec) {
    const oid = this.resolve(spec, { refs: true });
    return oid ? this.object(oid) : undefined;
  }

  /** A copy of an object as a GitObject. */
  object(oid) {
    const obj = this.objects.get(oid);
    return obj ? { oid, type: obj.type, content: Buffer.from(obj.content) } : undefined;
  }

  // --- refs ---------------------------------------------------------------------------------

  /** A copy of every ref, sorted by name: Map ref -> oid. */
  refs() {
    return new Map([...this.refMap].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Refs whose names start with one of the prefixes or equal one of the exact names. */
  refsMatching(exact, prefixes) {
    const out = new Map();
    for (const [ref, oid] of this.refs()) {
      if (exact.includes(ref) || prefixes.some((p) => ref.startsWith(p))) out.set(ref, oid);
    }
    return out;
  }

  /** Moves a ref behind Nyl's back (null deletes it). No compare-and-swap, no checks of the object. */
  setRef(ref, oid) {
    checkRefName(ref);
    if (oid === null || oid === undefined) this.refMap.delete(ref);
    else {
      if (!HEX40.test(oid)) throw new Error(`setRef ${ref}: ${oid} is not a 40-hex object id`);
      this.refMap.set(ref, oid);
    }
  }

  /** First-parent history of a ref or commit id, newest first: [{oid, message, parents, tree}]. */
  commitsOf(refOrOid) {
    let oid = this.refMap.get(refOrOid) ?? (HEX40.test(refOrOid) ? refOrOid : undefined);
    const out = [];
    const seen = new Set();
    while (oid && this.typeOf(oid) === 'commit' && !seen.has(oid)) {
      seen.add(oid);
      const c = parseCommit(this.objects.get(oid).content);
      out.push({ oid, message: c.message, parents: c.parents, tree: c.tree });
      oid = c.parents[0];
    }
    return out;
  }

  /**
   * The files of a commit (a ref name, commit id or tree id), optionally under dir, as a Map of
   * path (relative to dir) -> UTF-8 text, sorted by path. Empty when the commit or dir is missing.
   */
  filesAt(commit, dir = '') {
    const files = new Map();
    const start = this.resolve(`${commit}:${dir}`, { refs: true });
    if (!start || this.typeOf(start) !== 'tree') return files;
    const walk = (tree, prefix) => {
      for (const e of parseTree(this.objects.get(tree).content)) {
        const path = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.type === 'tree') walk(e.oid, path);
        else files.set(path, this.objects.get(e.oid)?.content.toString('utf8'));
      }
    };
    walk(start, '');
    return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Throws for updates no Git store would accept as a write (programming errors). */
  checkUpdates(updates, mode) {
    const seen = new Set();
    for (const u of updates) {
      checkRefName(u.ref);
      if (seen.has(u.ref)) throw new Error(`two updates of ${u.ref} in one write`);
      seen.add(u.ref);
      if (u.to !== null && (typeof u.to !== 'string' || !HEX40.test(u.to) || !this.objects.has(u.to))) {
        throw new Error(`${u.ref}: the target ${String(u.to)} is not an object of ${this.name}`);
      }
      if (u.expect !== null && u.expect !== undefined && (typeof u.expect !== 'string' || !HEX40.test(u.expect))) {
        throw new Error(`${u.ref}: expect ${String(u.expect)} is not a 40-hex object id, null or undefined`);
      }
      if (mode === 'push' && u.expect === undefined) throw new Error(`a push of ${u.ref} needs the value it expects`);
      if (mode === 'update-ref' && u.expect === null && u.to === null) throw new Error(`delete ${u.ref}: zero <oldvalue>`);
    }
  }

  /**
   * Checks and applies ref updates atomically (synchronously), with the rules of `mode`:
   * 'update-ref' (a clone's local transaction) or 'push' (an atomic push with leases). A push
   * judges what is up to date and every lease against `advertised` (the refs as it began; the
   * refs now when not given), and checks again, now, only the refs it moves.
   * Throws for programming errors; returns a RefWriteResult otherwise.
   */
  applyUpdates(updates, mode, advertised = this.refMap) {
    this.checkUpdates(updates, mode);
    if (updates.length === 0) return { ok: true };

    // Compare-and-swap of every ref.
    const stale = [];
    const moving = [];
    for (const u of updates) {
      const current = this.refMap.get(u.ref) ?? null;
      if (mode === 'push') {
        const seen = advertised.get(u.ref) ?? null;
        // git push: a ref already at its target is "up to date"; its lease is not checked.
        if (u.to !== null && seen === u.to) continue;
        if ((u.expect ?? null) !== seen) stale.push({ ref: u.ref, why: 'stale info' });
        else if (current !== seen) stale.push({ ref: u.ref, why: 'atomic transaction failed', underLock: true });
        else moving.push(u);
      } else {
        if (u.expect === undefined || u.expect === current) moving.push(u);
        else if (u.expect === null) stale.push({ ref: u.ref, why: 'reference already exists' });
        else if (current === null) stale.push({ ref: u.ref, why: `unable to resolve reference '${u.ref}'` });
        else stale.push({ ref: u.ref, why: `is at ${current} but expected ${u.expect}` });
      }
    }
    // A ref cannot be created where a ref is a directory of it or it of a ref (files backend).
    if (stale.length === 0) {
      const after = new Set(this.refMap.keys());
      for (const u of moving) if (u.to === null) after.delete(u.ref);
      for (const u of moving) {
        if (u.to === null || this.refMap.has(u.ref)) continue;
        const clash = [...after].find((r) => r !== u.ref && (r.startsWith(`${u.ref}/`) || u.ref.startsWith(`${r}/`)));
        if (clash) stale.push({ ref: u.ref, why: `'${clash}' exists; cannot create '${u.ref}'` });
        after.add(u.ref);
      }
    }
    if (stale.length > 0) {
      if (mode === 'push') {
        return {
          ok: false,
          kind: 'rejected',
          refs: updates.map((u) => ({
            ref: u.ref,
            reason: pushRejection(
              stale.find((s) => s.ref === u.ref),
              stale,
            ),
          })),
          message: `error: atomic push failed for ref ${stale[0].ref}. status: 7 (memory:${this.name})`,
        };
      }
      const message = `fatal: prepare: cannot lock ref '${stale[0].ref}': ${stale[0].why}`;
      return { ok: false, kind: 'rejected', refs: [{ ref: stale[0].ref, reason: message }], message };
    }
    for (const u of moving) {
      if (u.to === null) this.refMap.delete(u.ref);
      else this.refMap.set(u.ref, u.to);
    }
    this.writes++;
    return { ok: true };
  }
}

/**
 * A ref's reason in a rejected push, as git prints it: a stale lease is the client's own refusal;
 * a ref that moved under the remote's lock fails the whole atomic transaction there.
 */
function pushRejection(own, stale) {
  if (stale.some((s) => s.underLock)) return '[remote rejected] (atomic transaction failed)';
  return own ? `[rejected] (${own.why})` : '[rejected] (atomic push failed)';
}

function setPath(node, parts, blobOid) {
  const [head, ...rest] = parts;
  if (rest.length === 0) {
    node.set(head, { kind: 'blob', oid: blobOid });
    return;
  }
  let entry = node.get(head);
  if (!entry || entry.kind !== 'tree') {
    // fast-import replaces a file on the way with a directory.
    entry = { kind: 'tree', node: new Map() };
    node.set(head, entry);
  }
  setPath(entry.node, rest, blobOid);
}

/** Removes a path; directories left empty on the way are removed too (as fast-import does). */
function removePath(node, parts) {
  const [head, ...rest] = parts;
  const entry = node.get(head);
  if (!entry) return;
  if (rest.length === 0) {
    node.delete(head);
    return;
  }
  if (entry.kind !== 'tree') return; // a file where a directory was expected: nothing to remove
  removePath(entry.node, rest);
  if (entry.node.size === 0) node.delete(head);
}

// --- shared by the fakes of the ports ---------------------------------------------------------

/** An ObjectReader over a repository: by object id, with `^{tree}`, `^{commit}` and `:path`. */
export function memoryReader(repo) {
  const read = async (spec) => {
    await tick();
    const oid = repo.resolve(spec);
    return oid ? repo.object(oid) : undefined;
  };
  return {
    read,
    readMany: (specs) => Promise.all(specs.map(read)),
    readTree: async (spec) => {
      const obj = await read(spec);
      return obj && obj.type === 'tree' ? parseTree(obj.content) : undefined;
    },
  };
}

/**
 * Copies these objects with everything they reach from one repository into another, as a fetch
 * into no ref does. Returns the first object `from` lacks (nothing is half-copied that matters:
 * objects are immutable), or undefined.
 */
export function copyObjects(into, from, oids) {
  const pending = [...oids];
  while (pending.length > 0) {
    const oid = pending.pop();
    if (into.has(oid)) continue;
    const obj = from.object(oid);
    if (!obj) return oid;
    into.putObject(obj.type, obj.content);
    if (obj.type === 'commit') {
      const c = parseCommit(obj.content);
      pending.push(c.tree, ...c.parents);
    } else if (obj.type === 'tree') {
      for (const e of parseTree(obj.content)) pending.push(e.oid);
    }
  }
  return undefined;
}

/** Is `ancestor` in the history of `tip` in repo (a commit is in its own)? A commit it lacks is in none. */
export function inHistoryOf(repo, ancestor, tip) {
  const seen = new Set();
  const pending = [tip];
  while (pending.length > 0) {
    const oid = pending.pop();
    if (oid === ancestor) return repo.typeOf(oid) === 'commit';
    if (seen.has(oid) || repo.typeOf(oid) !== 'commit') continue;
    seen.add(oid);
    pending.push(...parseCommit(repo.object(oid).content).parents);
  }
  return false;
}

// --- the port -------------------------------------------------------------------------------

/** A DocumentCache in a Map. Values are stored as JSON, like JsonCache (a Map value does not survive). */
export class MemoryDocumentCache {
  constructor() {
    this.entries = new Map();
  }

  get(kind, oid) {
    const text = this.entries.get(`${kind}/${oid}`);
    return text === undefined ? undefined : JSON.parse(text);
  }

  set(kind, oid, value) {
    const text = JSON.stringify(value);
    if (text !== undefined) this.entries.set(`${kind}/${oid}`, text);
  }
}

/**
 * A StateLocation for a memory store, like resolveLocation's defaults: refs
 * refs/heads/nyl/<env>/{desired,observed}, coordination prefix refs/nyl/, kind 'remote' with url
 * `memory://<env>`. `overrides` replaces any field (kind: 'clone' drops url and pushURL).
 */
export function memoryLocation(environment = 'dev', overrides = {}) {
  const kind = overrides.kind ?? 'remote';
  const loc = {
    environment,
    kind,
    desiredRef: `refs/heads/nyl/${environment}/desired`,
    observedRef: `refs/heads/nyl/${environment}/observed`,
    statePath: '',
    coordinationPrefix: 'refs/nyl/',
    chosenBy: 'memory store (test)',
  };
  if (kind !== 'clone') {
    loc.url = `memory://${environment}`;
    loc.pushURL = loc.url;
  }
  if (kind === 'path') loc.localPath = `/memory/${environment}`;
  return { ...loc, ...overrides };
}

/**
 * The StateStore port over a MemoryRepository.
 *
 * options:
 * - beforeWrite(updates): awaited at the start of every non-empty write, with a copy of the
 *   updates, once the write took its advertisement and before it applies (inject delays, move
 *   refs to race the write as another process would while a push is in flight).
 * - unreachable(call): while it returns true, write resolves {ok: false, kind: 'unreachable'} and
 *   snapshot/snapshotPrefix throw NylError NYL-STATE-UNAVAILABLE, like the Git store when the
 *   remote cannot be reached. It is asked once per call, with the call's name ('write',
 *   'snapshot', 'snapshotPrefix') and, for a write, its updates, so a test can fail one kind of call
 *   only (a run's signal reads, a holder's renewals). Object reads and writeCommits keep working: the Git store reads
 *   and writes objects in its local work repository.
 * - cache: the DocumentCache to use (default: a new MemoryDocumentCache of this store).
 */
export class MemoryStateStore {
  /**
   * @param {MemoryRepository} repo
   * @param {object} loc a StateLocation (see memoryLocation)
   * @param {{beforeWrite?: (updates: object[]) => void | Promise<void>, unreachable?: (call: 'write' | 'snapshot' | 'snapshotPrefix', updates?: object[]) => boolean, cache?: object}} [options]
   */
  constructor(repo, loc, options = {}) {
    if (!(repo instanceof MemoryRepository)) throw new Error('MemoryStateStore needs a MemoryRepository');
    this.repo = repo;
    this.loc = loc;
    this.options = options;
    this.cache = options.cache ?? new MemoryDocumentCache();
    this.localRepository = `memory:${repo.name}`;
    /** 'update-ref' for a clone's own branches, 'push' for the other kinds (as the Git store). */
    this.mode = loc.kind === 'clone' ? 'update-ref' : 'push';
    this.closed = false;
    /** Calls made, for tests: writes (non-empty), rejected, unreachable, snapshots, commits written. */
    this.stats = { writes: 0, rejected: 0, unreachable: 0, snapshots: 0, commits: 0 };
    this.reader = memoryReader(repo);
  }

  /** The refs this environment's state consists of (GitStateStore.watchedRefs). */
  get watchedRefs() {
    return {
      exact: [...new Set([this.loc.desiredRef, this.loc.observedRef])],
      prefixes: [`${this.loc.coordinationPrefix}${this.loc.environment}/`],
    };
  }

  isUnreachable(call, updates) {
    return Boolean(this.options.unreachable?.(call, updates));
  }

  unavailable() {
    fail(
      'NYL-STATE-UNAVAILABLE',
      `the state repository ${this.loc.url ?? 'of the clone'} of ${this.loc.environment} cannot be read: unreachable (memory store)`,
      {
        env: this.loc.environment,
      },
    );
  }

  async ensureOpen() {
    await tick();
  }

  async snapshot(options = {}) {
    await tick();
    // cached (a network location): what this store last read or wrote (the Git store's mirror refs), without a read.
    if (options.cached && this.loc.kind === 'remote') return new Map(this.lastSeen ?? []);
    if (this.isUnreachable('snapshot')) this.unavailable();
    this.stats.snapshots++;
    const { exact, prefixes } = this.watchedRefs;
    const refs = this.repo.refsMatching(exact, prefixes);
    this.lastSeen = new Map(refs);
    return refs;
  }

  async snapshotPrefix(prefix) {
    if (!prefix.endsWith('/')) throw new Error(`snapshotPrefix needs a prefix ending with '/': ${prefix}`);
    await tick();
    if (this.isUnreachable('snapshotPrefix')) this.unavailable();
    this.stats.snapshots++;
    return this.repo.refsMatching([], [prefix]);
  }

  mayHaveRefsUnder(prefix) {
    if (!prefix.endsWith('/')) throw new Error(`mayHaveRefsUnder needs a prefix ending with '/': ${prefix}`);
    for (const ref of this.repo.refMap.keys()) if (ref.startsWith(prefix)) return true;
    return false;
  }

  /**
   * How a write is applied, as the Git store does it: a clone's own branches, and a repository of
   * this machine (kind 'path') for coordination refs only, take a local ref transaction
   * ('update-ref'); everything else is a push.
   */
  modeFor(updates) {
    if (this.mode === 'update-ref') return 'update-ref';
    const coordination = `${this.loc.coordinationPrefix}${this.loc.environment}/`;
    return this.loc.kind === 'path' && updates.every((u) => u.ref.startsWith(coordination)) ? 'update-ref' : 'push';
  }

  async write(updates) {
    const copy = updates.map((u) => ({ ...u }));
    const mode = this.modeFor(copy);
    this.repo.checkUpdates(copy, mode);
    if (copy.length === 0) {
      await tick();
      return { ok: true };
    }
    const advertised = new Map(this.repo.refMap);
    if (this.options.beforeWrite) await this.options.beforeWrite(copy.map((u) => ({ ...u })));
    await tick();
    this.stats.writes++;
    if (this.isUnreachable('write', copy)) {
      this.stats.unreachable++;
      return { ok: false, kind: 'unreachable', message: `fatal: unable to access '${this.loc.pushURL ?? this.localRepository}': unreachable (memory store)` };
    }
    const result = this.repo.applyUpdates(copy, mode, advertised);
    if (!result.ok) this.stats.rejected++;
    else if (this.lastSeen) for (const u of copy) u.to === null ? this.lastSeen.delete(u.ref) : this.lastSeen.set(u.ref, u.to);
    return result;
  }

  async writeCommits(commits) {
    await tick();
    if (commits.length === 0) return [];
    const ids = this.repo.writeCommits(commits);
    this.stats.commits += ids.length;
    return ids;
  }

  /** Copies the objects these commits reach from another memory store's repository. */
  async importObjects(from, oids) {
    await tick();
    if (from.repo === this.repo) return;
    const missing = copyObjects(this.repo, from.repo, oids);
    if (missing) throw new Error(`importObjects: ${missing} is not an object of ${from.repo.name}`);
  }

  async isAncestor(ancestor, tip) {
    await tick();
    return inHistoryOf(this.repo, ancestor, tip);
  }

  close() {
    this.closed = true;
  }
}
