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
const MAX_HISTORY = 200_000;

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

/** What a commit did to the object at a path: added, changed or removed it; undefined when nothing. */
type PathChange = 'added' | 'changed' | 'removed' | undefined;

/**
 * What commits did to one path (a file or a directory), each commit's object at the path read
 * once: along a first-parent history a commit's parent is the next commit, whose read it shares.
 * A root commit's parent side is empty, so a root commit that has the path added it.
 */
export class PathChanges {
  private readonly at = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly reader: ObjectReader,
    private readonly path: string,
  ) {}

  /** What each commit did to the path, in order; the objects not read yet are read in one batch. */
  async of(commits: readonly StateCommit[]): Promise<PathChange[]> {
    const unread = [...new Set(commits.flatMap((c) => (c.parent ? [c.oid, c.parent] : [c.oid])))].filter((oid) => !this.at.has(oid));
    if (unread.length > 0) {
      const objects = this.reader.readMany(unread.map((oid) => `${oid}:${this.path}`));
      unread.forEach((oid, i) =>
        this.at.set(
          oid,
          objects.then((o) => o[i]?.oid),
        ),
      );
    }
    return Promise.all(commits.map((c) => this.change(c)));
  }

  private async change(c: StateCommit): Promise<PathChange> {
    const [now, before] = await Promise.all([this.at.get(c.oid)!, c.parent ? this.at.get(c.parent)! : undefined]);
    if (now === before) return undefined;
    return now === undefined ? 'removed' : before === undefined ? 'added' : 'changed';
  }
}

/** What one commit did to the object at a path (see PathChanges). */
export async function pathChange(reader: ObjectReader, commit: StateCommit, path: string): Promise<PathChange> {
  const [change] = await new PathChanges(reader, path).of([commit]);
  return change;
}

/** Did the commit write the path (add or change it)? On a ref shared through `state.path`, the commits that wrote an environment's directory are its own. */
export function wrotePath(change: PathChange): boolean {
  return change === 'added' || change === 'changed';
}
