/**
 * The local state service's port (./local-repositories.ts) over Git, in the layout of the Git
 * store (./git-store.ts): the checkout, and the store's work repository, in which a remote's
 * state refs are mirrored under refs/nyl-mirror/ (`mirror` names a state ref's copy there).
 */
import { fetchObjects, fetchRefs, inHistory } from '../git/fetch';
import type { Git } from '../git/git';
import { mayHaveLocalRefs } from '../git/ref-files';
import { type RefUpdate, type RefWriteResult, readRefs, updateRefsLocally } from '../git/refs';
import type { LocalRepositories } from './local-repositories';
import type { StateLocation } from './location';
import type { ObjectReader, RefSnapshot } from './store';

/** The layout facts the Git store knows of its location. */
interface GitLayout {
  loc: StateLocation;
  checkout: string;
  work: string;
  key: string | undefined;
  checkoutReader: ObjectReader;
  /** The work repository's copy of a state ref. */
  mirror(ref: string): string;
}

export class GitLocalRepositories implements LocalRepositories {
  readonly loc: StateLocation;
  readonly checkout: string;
  readonly work: string;
  readonly key: string | undefined;
  readonly checkoutReader: ObjectReader;
  private readonly mirror: (ref: string) => string;

  constructor(
    private readonly git: Git,
    layout: GitLayout,
  ) {
    ({ loc: this.loc, checkout: this.checkout, work: this.work, key: this.key, checkoutReader: this.checkoutReader, mirror: this.mirror } = layout);
  }

  get localState(): string | undefined {
    return this.loc.kind === 'remote' ? this.work : undefined;
  }

  get cacheRepository(): string | undefined {
    return this.loc.kind === 'remote' && this.work !== this.checkout ? this.work : undefined;
  }

  readRefs(repository: string, patterns: string[]): Promise<RefSnapshot> {
    return readRefs(this.git, repository, patterns);
  }

  mayHaveRefs(repository: string, refs: string[]): boolean | undefined {
    return mayHaveLocalRefs(repository, refs);
  }

  updateRefs(repository: string, updates: RefUpdate[]): Promise<RefWriteResult> {
    return updateRefsLocally(this.git, repository, updates);
  }

  isAncestor(ancestor: string, tip: string): Promise<boolean> {
    return inHistory(this.git, this.work, ancestor, tip);
  }

  /** A fetch of the work repository's copies into the branches, without `+`: fast-forwards only. */
  async fastForwardKnown(tips: RefSnapshot): Promise<boolean> {
    const source = this.work === this.checkout ? '.' : this.work;
    const result = await fetchRefs(
      this.git,
      this.checkout,
      source,
      [...tips.keys()].map((r) => ({ from: this.mirror(r), to: r })),
    );
    return result.code === 0;
  }

  async copyCommits(into: string, from: string, revisions: string[]): Promise<string | undefined> {
    const result = await fetchObjects(this.git, into, from, revisions);
    return result.code === 0 ? undefined : this.git.failureOf(result);
  }
}
