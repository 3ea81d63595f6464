/**
 * An environment's history as `nyl log` and `nyl show` read it: the transition commits of its
 * desired and observed refs, merged into one entry per operation.
 *
 * One operation writes the same message, at the same second, on each ref whose files it changed
 * (src/state/transition.ts), and only there: an operation may be on one ref alone. So the two
 * first-parent histories are merged by (commit time, message): a desired and an observed commit
 * with both equal are one operation. A state move onto a ref that existed continues the history
 * through its second parent (src/state/state-commits.ts follows it), so a moved environment's log goes on
 * past the move. On refs shared through `state.path` only the commits that changed the
 * environment's directory are its own.
 *
 * Parsing a message never fails: a hand-made commit on a state ref shows its headline, with
 * operation `-` when it has no Nyl-Operation trailer.
 */
import { isoSeconds } from '../../util/clock';
import { type StateLocation, statePathOf } from '../../state/location';
import { parseYaml } from '../../state/parse';
import { firstParentHistory, PathChanges, type StateCommit, wrotePath } from '../../state/state-commits';
import type { ObjectReader, RefSnapshot } from '../../state/store';

/** A transition message taken apart: headline, YAML body and Nyl-* trailers. */
export interface TransitionView {
  headline: string;
  operation: string;
  body: Record<string, unknown>;
  trailers: Record<string, string>;
}

/** One operation: its commit on either ref or both. */
export interface HistoryEntry {
  time: number;
  message: string;
  desired?: StateCommit;
  observed?: StateCommit;
}

/** The lists of a transition body whose items are unit names, in the order a unit's result takes them. */
const UNIT_LISTS = [
  'executed',
  'imported',
  'recovered',
  'removed',
  'held',
  'retained',
  'released',
  'incomplete',
  'allowDependents',
  'desiredRestored',
  'requested',
] as const;

const TRAILER = /^(Nyl-[A-Za-z-]+): (.*)$/;

/** Splits a transition message; the trailers are the last paragraph when every line is one. */
export function parseTransition(message: string): TransitionView {
  const paragraphs = message.replace(/\s+$/, '').split(/\n\n+/);
  const headline = paragraphs[0] ?? '';
  const last = paragraphs.length > 1 ? paragraphs[paragraphs.length - 1]! : '';
  const lines = last.split('\n');
  const isTrailers = last !== '' && lines.every((l) => TRAILER.test(l));
  const trailers: Record<string, string> = {};
  if (isTrailers) for (const l of lines) trailers[TRAILER.exec(l)![1]!] = TRAILER.exec(l)![2]!;
  const bodyText = paragraphs.slice(1, isTrailers ? -1 : undefined).join('\n\n');
  const body = bodyOf(bodyText);
  const operation = trailers['Nyl-Operation'] ?? (typeof body.operation === 'string' ? body.operation : '-');
  return { headline, operation, body, trailers };
}

/** The body as a map; anything else (not YAML, a scalar) is no body. */
function bodyOf(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  const parsed = parseYaml(text);
  const value = parsed.ok ? parsed.value : undefined;
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** What the body's `units` map says of one unit: a result, or the action of recover, hold, forget. */
function unitResult(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return String(value);
  const v = value as Record<string, unknown>;
  if (v.action === 'accept' && typeof v.run === 'string') return `accept ${v.run}`;
  if (v.action === 'forget' && typeof v.was === 'string') return `forget (was ${v.was})`;
  return typeof v.action === 'string' ? v.action : JSON.stringify(value);
}

/**
 * Each unit the transition names, with what happened to it: the `units` map's result, then each
 * list that names it (executed, imported, ...) that says something more.
 */
export function unitResults(t: TransitionView): Map<string, string> {
  const out = new Map<string, string[]>();
  const add = (unit: string, what: string) => {
    const seen = out.get(unit) ?? [];
    if (!seen.includes(what)) out.set(unit, [...seen, what]);
  };
  const units = t.body.units;
  if (units && typeof units === 'object' && !Array.isArray(units)) for (const [u, v] of Object.entries(units)) add(u, unitResult(v));
  for (const list of UNIT_LISTS) {
    const items = t.body[list];
    // `held` of a hold commit only repeats its action.
    if (list === 'held' && t.operation === 'hold') continue;
    if (Array.isArray(items)) for (const u of items) if (typeof u === 'string') add(u, list);
  }
  return new Map([...out].map(([u, w]) => [u, w.join(', ')]));
}

/** Does the transition name the unit: in its body (`results`: its unitResults), or in the headline's parentheses? */
export function namesUnit(t: TransitionView, unit: string, results: ReadonlyMap<string, string> = unitResults(t)): boolean {
  if (results.has(unit)) return true;
  const few = /\(([^)]*)\)$/.exec(t.headline)?.[1];
  return few !== undefined && few.split(', ').includes(unit);
}

const keyOf = (c: StateCommit) => `${c.time}\u0000${c.message}`;

/** Pairs each desired commit with the newest unpaired observed commit of the same time and message. */
function pairUp(desired: readonly StateCommit[], observed: readonly StateCommit[]): { dToO: (number | undefined)[]; oToD: (number | undefined)[] } {
  const waiting = new Map<string, number[]>();
  observed.forEach((c, i) => waiting.set(keyOf(c), [...(waiting.get(keyOf(c)) ?? []), i]));
  const dToO: (number | undefined)[] = [];
  const oToD: (number | undefined)[] = observed.map(() => undefined);
  desired.forEach((c, d) => {
    const o = waiting.get(keyOf(c))?.shift();
    dToO.push(o);
    if (o !== undefined) oToD[o] = d;
  });
  return { dToO, oToD };
}

/**
 * Merges the two histories (each newest first) into one entry per operation, newest first. A
 * desired and an observed commit pair up when their time and message are equal; each commit pairs
 * once, the newest unpaired first. Each ref's own order is kept (a hand-made commit with an odd
 * date stays where its ref has it); between the refs the newer commit comes first, and a commit
 * whose pair sits further down the other ref waits for the commits above that pair.
 */
export function mergeHistories(desired: readonly StateCommit[], observed: readonly StateCommit[]): HistoryEntry[] {
  const { dToO, oToD } = pairUp(desired, observed);
  const out: HistoryEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < desired.length || j < observed.length) {
    const d = desired[i];
    const o = observed[j];
    if (d && dToO[i] !== undefined && dToO[i] === j) {
      out.push({ time: d.time, message: d.message, desired: d, observed: o! });
      i++;
      j++;
      continue;
    }
    // A commit paired further down the other ref must wait; otherwise the newer one goes first.
    const dWaits = d !== undefined && (dToO[i] ?? -1) > j;
    const oWaits = o !== undefined && (oToD[j] ?? -1) > i;
    const takeDesired = !o || (d !== undefined && (dWaits === oWaits ? d.time >= o.time : oWaits));
    if (takeDesired) {
      out.push({ time: d!.time, message: d!.message, desired: d! });
      i++;
    } else {
      out.push({ time: o.time, message: o.message, observed: o });
      j++;
    }
  }
  return out;
}

/** The entry's time as ISO 8601 in UTC. */
export function entryTime(e: HistoryEntry): string {
  return isoSeconds(e.time * 1000);
}

/** The commits of one ref's first-parent history that are the environment's own: on a shared ref, those that wrote its directory. */
async function ownHistory(reader: ObjectReader, loc: StateLocation, tip: string | undefined): Promise<StateCommit[]> {
  const all = await firstParentHistory(reader, tip);
  if (!loc.statePath) return all;
  const changes = await new PathChanges(reader, loc.statePath).of(all);
  return all.filter((_, i) => wrotePath(changes[i]));
}

/** The environment's history at these refs: one entry per operation, newest first. */
export async function readEnvironmentHistory(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot): Promise<HistoryEntry[]> {
  const [desired, observed] = await Promise.all([
    ownHistory(reader, loc, refs.get(loc.desiredRef)),
    loc.observedRef === loc.desiredRef ? [] : ownHistory(reader, loc, refs.get(loc.observedRef)),
  ]);
  return mergeHistories(desired, observed);
}

/**
 * Tells whether an operation changed the unit's desired or observed document (added, changed or
 * removed it). One per walk: each commit's file is read once, whichever entries ask for it.
 */
export function unitChangeCheck(reader: ObjectReader, loc: StateLocation, unit: string): (e: HistoryEntry) => Promise<boolean> {
  const changes = new PathChanges(reader, statePathOf(loc, `units/${unit}.yaml`));
  const changed = async (c: StateCommit | undefined) => c !== undefined && (await changes.of([c]))[0] !== undefined;
  return async (e) => (await changed(e.desired)) || (await changed(e.observed));
}
