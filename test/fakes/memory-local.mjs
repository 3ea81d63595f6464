// An in-memory implementation of the local state service's port (src/state/local-repositories.ts):
// the checkout and the store's work repository as MemoryRepositories (one object for both when
// the layout has one repository), for tests of the local state service (src/state/local-state.ts)
// without Git.
//
// Fidelity (checked by test/conformance/local-state.test.mjs against the Git implementation):
// - readRefs matches patterns as `git for-each-ref` does: exactly, as a prefix up to a '/', or as
//   a glob whose `*` also matches '/';
// - updateRefs is the clone's local transaction of MemoryRepository.applyUpdates ('update-ref');
// - fastForwardKnown brings each tip's objects from the work repository into the checkout and
//   moves the branch only when that is a fast-forward (the others move all the same, as a fetch
//   without --atomic does); copyCommits copies objects only, by id or by a ref name of `from`.
// - Every method that reads or changes a repository yields to the event loop first.
//
// Layouts (`layout(name, ...)` below), as the Git store's locations give them:
//   'clone'  one repository, no known branches (a clone location: its branches are the state);
//   'origin' one repository: a remote that is the checkout's origin (--local works in the checkout);
//   'path'   a checkout and the state repository of this machine as the work repository;
//   'cache'  a checkout and a remote's cache repository, where --local works.

import { MemoryRepository, copyObjects, inHistoryOf, memoryReader } from './memory-store.mjs';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function escapeRegExp(text) {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** Does a for-each-ref pattern select ref? */
export function refMatches(pattern, ref) {
  if (pattern.includes('*')) return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(ref);
  if (ref === pattern) return true;
  return ref.startsWith(pattern.endsWith('/') ? pattern : `${pattern}/`);
}

export class MemoryLocalRepositories {
  /**
   * @param {{loc: object, checkout: MemoryRepository, work: MemoryRepository, key?: string, localState?: boolean, cache?: boolean}} options
   * localState: --local writes in the work repository; cache: the work repository is a remote's
   * cache repository apart from the checkout.
   */
  constructor({ loc, checkout, work, key, localState = false, cache = false }) {
    this.loc = loc;
    this.byName = new Map([
      [`memory:${checkout.name}`, checkout],
      [`memory:${work.name}`, work],
    ]);
    this.checkout = `memory:${checkout.name}`;
    this.work = `memory:${work.name}`;
    this.key = key;
    this.localState = localState ? this.work : undefined;
    this.cacheRepository = cache ? this.work : undefined;
    this.checkoutReader = memoryReader(checkout);
  }

  repo(name) {
    const repo = this.byName.get(name);
    if (!repo) throw new Error(`no repository ${name} in this layout`);
    return repo;
  }

  async readRefs(repository, patterns) {
    await tick();
    const out = new Map();
    for (const [ref, oid] of this.repo(repository).refs()) if (patterns.some((p) => refMatches(p, ref))) out.set(ref, oid);
    return out;
  }

  mayHaveRefs(repository, refs) {
    return [...this.repo(repository).refMap.keys()].some((ref) => refs.some((p) => refMatches(p, ref)));
  }

  async updateRefs(repository, updates) {
    await tick();
    return this.repo(repository).applyUpdates(
      updates.map((u) => ({ ...u })),
      'update-ref',
    );
  }

  async isAncestor(ancestor, tip) {
    await tick();
    return inHistoryOf(this.repo(this.work), ancestor, tip);
  }

  async fastForwardKnown(tips) {
    await tick();
    const checkout = this.repo(this.checkout);
    const work = this.repo(this.work);
    let all = true;
    for (const [ref, to] of tips) {
      if (copyObjects(checkout, work, [to]) !== undefined) throw new Error(`fastForwardKnown: ${to} is not in the work repository`);
      const tip = checkout.refMap.get(ref);
      if (tip === undefined || inHistoryOf(checkout, tip, to)) checkout.setRef(ref, to);
      else all = false;
    }
    return all;
  }

  async copyCommits(into, from, revisions) {
    await tick();
    const source = this.repo(from);
    const oids = revisions.map((r) => source.refMap.get(r) ?? r);
    const missing = copyObjects(this.repo(into), source, oids);
    return missing === undefined ? undefined : `fatal: remote error: upload-pack: not our ref ${missing}`;
  }
}

/** The port in one of the layouts above; the repositories are made here unless given. */
export function memoryLayout(name, loc, { checkout = new MemoryRepository('checkout'), work, key = 'a1b2c3d4e5f6' } = {}) {
  const one = name === 'clone' || name === 'origin';
  const workRepo = one ? checkout : (work ?? new MemoryRepository('work'));
  return new MemoryLocalRepositories({
    loc,
    checkout,
    work: workRepo,
    key: name === 'clone' ? undefined : key,
    localState: name === 'origin' || name === 'cache',
    cache: name === 'cache',
  });
}
