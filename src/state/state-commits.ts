/**
 * The history of a state ref, read through the store's object reader: each commit's id, the
 * parent the environment's record goes on with, commit time and message. State refs move
 * fast-forward by one commit per operation, which has a single parent, except a `state move`
 * onto a ref that existed: its second parent is the environment's own history (the old
 * location's), its first the ref's earlier tip (another environment's, or an older history the
 * old one contains). The walk takes the second parent there, so it is the environment's record.
 *
 * Only full object ids are read: what a user typed is matched against the ids of the history,
 * never handed to a reader (Git's would resolve `HEAD` or a branch name of the work repository).
 */
import type { ObjectReader } from './store';

export interface StateCommit {
  oid: string;
  parent?: string;
  /** Committer time in seconds since the epoch, as Git records it. */
  time: number;
  message: string;
  /** The author, "Name <email>" (a transition's author is the operation's identity). */
  author?: string;
}

/** How far back a walk reads: far beyond any state history Nyl writes, short of an endless loop. */
export const MAX_HISTORY = 200_000;

/** Parses a commit object's text into the fields a state history needs. */
export function parseStateCommit(oid: string, text: string): StateCommit {
  const split = text.indexOf('\n\n');
  const header = split < 0 ? text : text.slice(0, split);
  const parents = [...header.matchAll(/^parent ([0-9a-f]{40})$/gm)].map((m) => m[1]!);
  const time = Number(/^committer .* (\d+) [+-]\d{4}$/m.exec(header)?.[1] ?? 0);
  const message = split < 0 ? '' : text.slice(split + 2);
  const author = /^author (.*) \d+ [+-]\d{4}$/m.exec(header)?.[1];
  const moved = parents.length === 2 && /^Nyl-Operation: state-move$/m.test(message);
  const parent = moved ? parents[1] : parents[0];
  return { oid, time, message, ...(parent ? { parent } : {}), ...(author ? { author } : {}) };
}

/** The commits of tip's first-parent history, newest first; stops at a missing or non-commit object. */
export async function firstParentHistory(reader: ObjectReader, tip: string | undefined): Promise<StateCommit[]> {
  const out: StateCommit[] = [];
  let oid = tip;
  while (oid && out.length < MAX_HISTORY) {
    const obj = await reader.read(oid);
    if (!obj || obj.type !== 'commit') break;
    const commit = parseStateCommit(oid, obj.content.toString());
    out.push(commit);
    oid = commit.parent;
  }
  return out;
}
