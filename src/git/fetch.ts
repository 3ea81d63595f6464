/**
 * Fetches, and the one repository creation of the state store: every argv that copies refs or
 * objects between repositories of this machine, or from a remote, is built here.
 *
 * Every fetch of Nyl runs without tags, FETCH_HEAD or an automatic gc in the middle of a run, and
 * quietly. The callers decide what to retry (network blips, ref lock races) and how to report a
 * failure: these functions return the process result and never throw for a non-zero exit.
 */
import type { ProcessResult } from '../exec/process';
import type { Git } from './git';

const FETCH = ['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', '--no-auto-gc'];

/**
 * A ref of the source (or a prefix ending in '/', which copies every ref under it) and where its
 * copy goes in the fetching repository.
 */
export interface RefCopy {
  from: string;
  to: string;
  /**
   * The source ref may not exist: the refspec becomes a pattern (`from*:to*`), which matches the
   * ref when it exists and fails nothing when it does not (an exact refspec that matches nothing
   * fails the whole fetch). It may also copy refs whose names continue the name; callers read
   * the exact names.
   */
  mayBeMissing?: boolean;
}

interface RefFetchOptions {
  /** Move the copies whatever they held (`+`); without it a copy only fast-forwards. */
  force?: boolean;
  /** Delete the copies whose source refs are gone (`--prune`). */
  prune?: boolean;
  /** The fetching repository's checked-out branch may be a copy (`--update-head-ok`). */
  updateHeadOk?: boolean;
}

function refspecOf(copy: RefCopy, force: boolean): string {
  const glob = copy.from.endsWith('/') || copy.mayBeMissing ? '*' : '';
  return `${force ? '+' : ''}${copy.from}${glob}:${copy.to}${glob}`;
}

/** The argv of a fetch of refs into refs (for a caller that runs it with retries of its own). */
export function refFetchArgs(source: string, copies: RefCopy[], options: RefFetchOptions = {}): string[] {
  const flags = [...(options.updateHeadOk ? ['--update-head-ok'] : []), ...(options.prune ? ['--prune'] : [])];
  return [...FETCH, ...flags, source, ...copies.map((c) => refspecOf(c, options.force ?? false))];
}

/**
 * The argv of a fetch of objects into no ref: these revisions (object ids, or ref names of the
 * source) with everything they reach.
 */
export function objectFetchArgs(source: string, revisions: string[]): string[] {
  return [...FETCH, source, ...revisions];
}

/** Copies refs of `source` into refs of the repository `dir` (see refFetchArgs). */
export function fetchRefs(git: Git, dir: string, source: string, copies: RefCopy[], options: RefFetchOptions = {}): Promise<ProcessResult> {
  return git.run(dir, refFetchArgs(source, copies, options));
}

/** Brings these revisions of `source` with everything they reach into `dir`, moving no ref. */
export function fetchObjects(git: Git, dir: string, source: string, revisions: string[]): Promise<ProcessResult> {
  return git.run(dir, objectFetchArgs(source, revisions));
}

/** Creates an empty bare repository at dir (a remote's cache repository). */
export async function initBareRepository(git: Git, dir: string): Promise<void> {
  await git.text(dir, ['init', '--bare', '--quiet']);
}

/**
 * Is `ancestor` in the history of `tip` in the repository dir (a commit is in its own)? A commit
 * the repository does not have is in no history: any failure answers no.
 */
export async function inHistory(git: Git, dir: string, ancestor: string, tip: string): Promise<boolean> {
  const result = await git.run(dir, ['merge-base', '--is-ancestor', ancestor, tip]);
  return result.code === 0;
}
