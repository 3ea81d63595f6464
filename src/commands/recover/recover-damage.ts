/**
 * What `nyl recover -e ENV --reason R` does with damaged state (NYL-STATE-CORRUPT), in the same
 * transition commit as an import. Nothing is guessed; every repair is recorded under `repaired`
 * in the commit body, with the operator's reason, and the damaged content stays reachable:
 * - state.yaml: restored from its copy on the other state ref, else from the newest readable
 *   version in the desired ref's history (the repair commit's parent holds the damaged one);
 * - a unit's desired or observed document: replaced by one that keeps the unit's incarnation
 *   (its uid from the other document; a new one when neither names it) and marks it uncertain,
 *   keeping a readable receipt. A converging unit runs again at the next reconcile; a manual
 *   one waits for `recover --unit U --retry` or `--accept`. Never a silent re-run;
 * - a damaged run ref: imported like any dead run, its untrusted units uncertain, and set aside
 *   under `damaged/runs/RUN` (the importer's coordination updates do that);
 * - a damaged signal: set aside under `damaged/signals/RUN/ID`, with a warning, since it may have
 *   asked to hold a unit.
 * A damaged lease is not repaired here: `nyl lease break` breaks it first.
 */
import { diagnostic, type Diagnostic, NylError } from '../../errors/diagnostic';
import type { RefUpdate } from '../../git/refs';
import { isHeld } from '../../plan/unit-view';
import { readSignals, type SignalsRead } from '../../run/signals';
import { type Damage, damageDiagnostic, whereOf } from '../../state/damage';
import type { ConditionRecord, DesiredUnitDoc, EnvironmentStateDoc, ObservedUnitDoc } from '../../state/documents';
import { damagedPrefix, signalsPrefix, type StateLocation, statePathOf } from '../../state/location';
import { parseStateDocument } from '../../state/parse';
import { type EnvironmentStateView, readEnvironmentState, readStateFile, type StateFileRead } from '../../state/read';
import { type RecordedRun, readRecordedRuns } from '../../state/run-record';
import type { ObjectReader, RefSnapshot } from '../../state/store';
import type { OpenedEnvironment } from '../shared/context';
import { stateRefsMoved } from '../state/state-checks';

/** Everything damaged recover can repair, read once without and again under the lease. */
export interface Survey {
  refs: RefSnapshot;
  view: EnvironmentStateView;
  /** The observed ref's copy of state.yaml. */
  observedState: StateFileRead;
  runs: RecordedRun[];
  signals: SignalsRead;
}

/** A repair as the commit body records it. */
export interface RepairRecord {
  ref: string;
  path?: string;
  object: string;
  problem: string;
  action: string;
}

export function damageOfSurvey(s: Survey): Damage[] {
  return [...s.view.damage, ...(s.observedState.damage ? [s.observedState.damage] : []), ...s.runs.flatMap((r) => r.damage), ...s.signals.damaged];
}

export function runsDamaged(s: Survey): boolean {
  return s.runs.some((r) => r.damage.length > 0);
}

/** Reads what recover repairs; under the lease, the state documents are read again only when they moved. */
export async function survey(opened: OpenedEnvironment, refs: RefSnapshot, before?: Survey): Promise<Survey> {
  const { store, loc } = opened;
  const moved = !before || stateRefsMoved(loc, before.refs, refs);
  const [view, observedState, runs, signals] = await Promise.all([
    moved ? readEnvironmentState(store.reader, loc, refs, store.cache, { tolerate: true }) : before.view,
    moved ? readStateFile(store.reader, loc, loc.observedRef, refs.get(loc.observedRef)) : before.observedState,
    readRecordedRuns(store.reader, loc, refs),
    readSignals(store, refs),
  ]);
  return { refs, view, observedState, runs, signals };
}

function record(d: Damage, action: string): RepairRecord {
  return { ref: d.ref, ...(d.path ? { path: d.path } : {}), object: d.object, problem: d.problem, action };
}

/** The state document after repairs, and the state.yaml files to write on each state ref. */
export interface StateRepair {
  state: EnvironmentStateDoc | undefined;
  files: { desired?: EnvironmentStateDoc; observed?: EnvironmentStateDoc };
  repaired: RepairRecord[];
}

/** Restores a damaged state.yaml from the copy on the other ref or from history; completes a damaged copy. */
export async function repairStateFiles(opened: OpenedEnvironment, s: Survey): Promise<StateRepair> {
  const { store, loc, env } = opened;
  const out: StateRepair = { state: s.view.state, files: {}, repaired: [] };
  const damaged = s.view.damage.find((d) => d.document === 'state');
  if (damaged) {
    const copy = s.observedState.doc?.environment === env.name ? { doc: s.observedState.doc, from: `the copy on ${loc.observedRef}` } : undefined;
    const found =
      copy ?? (await newestReadableState(store.reader, loc, s.refs.get(loc.desiredRef)).then((h) => h && { doc: h.doc, from: `commit ${h.commit}` }));
    if (!found)
      throw new NylError(
        damageDiagnostic(env.name, {
          ...damaged,
          problem: `${damaged.problem}; no readable state.yaml is left on ${loc.observedRef} or in the history of ${loc.desiredRef}`,
        }),
      );
    out.state = found.doc;
    out.files.desired = found.doc;
    out.repaired.push(record(damaged, `restored from ${found.from}`));
  }
  if (s.observedState.damage && out.state && loc.observedRef !== loc.desiredRef) {
    out.files.observed = out.state;
    out.repaired.push(record(s.observedState.damage, `copied from ${loc.desiredRef}`));
  }
  return out;
}

function damagedCondition(name: string, d: Damage, run: string, now: string): ConditionRecord {
  const side = d.document === 'desired-unit' ? 'desired' : 'observed';
  const reason = `its ${side} document was damaged (${whereOf(d)}: ${d.problem}) and recover replaced it; check what ${name} did`;
  return { type: 'uncertain', retryable: false, reason, run, since: now, code: 'NYL-STATE-CORRUPT' };
}

/**
 * Replaces damaged unit documents: the incarnation kept (uid from the readable document, or
 * `mint()`), a desired document with nothing else guessed, and an uncertain condition.
 */
export function repairUnits(
  view: EnvironmentStateView,
  generation: number,
  at: { run: string; now: string; mint: () => string },
  repaired: RepairRecord[],
): { desired: Map<string, DesiredUnitDoc>; observed: Map<string, ObservedUnitDoc> } {
  const desired = new Map(view.desiredUnits);
  const observed = new Map(view.observedUnits);
  const units = view.damage.filter((d) => d.unit && (d.document === 'desired-unit' || d.document === 'observed-unit'));
  for (const d of units) {
    const name = d.unit!;
    // Both documents damaged: the first repair mints the uid, the second finds it.
    const uid = desired.get(name)?.uid ?? observed.get(name)?.uid ?? at.mint();
    if (d.document === 'desired-unit') desired.set(name, { uid, generation, lifecycle: { state: 'active' } });
    const kept = d.document === 'observed-unit' ? {} : (observed.get(name) ?? {});
    observed.set(name, { ...kept, uid, condition: damagedCondition(name, d, at.run, at.now) });
    repaired.push(record(d, `replaced: ${name} keeps uid ${uid} and is uncertain`));
  }
  return { desired, observed };
}

/** Every uncertain unit keeps an incarnation: one a damaged run created gets a uid of its own. */
export function giveIncarnations(desired: Map<string, DesiredUnitDoc>, observed: Map<string, ObservedUnitDoc>, generation: number, mint: () => string): void {
  for (const [name, o] of observed) {
    if (o.condition?.type !== 'uncertain' || o.uid) continue;
    const d = desired.get(name);
    const uid = d?.uid ?? mint();
    observed.set(name, { ...o, uid });
    if (!d?.uid && !isHeld(d)) desired.set(name, { uid, generation, lifecycle: { state: 'active' } });
  }
}

/** Damaged signals: deleted and set aside under `damaged/signals/...`, each with a warning. */
export function setAsideSignals(opened: OpenedEnvironment, s: Survey): { updates: RefUpdate[]; warnings: Diagnostic[]; repaired: RepairRecord[] } {
  const { loc, env } = opened;
  const out = { updates: [] as RefUpdate[], warnings: [] as Diagnostic[], repaired: [] as RepairRecord[] };
  for (const d of s.signals.damaged) {
    const keptAt = `${damagedPrefix(loc)}signals/${d.ref.slice(signalsPrefix(loc).length)}`;
    out.updates.push({ ref: d.ref, expect: d.object, to: null }, { ref: keptAt, expect: s.refs.get(keptAt) ?? null, to: d.object });
    const warning = damageDiagnostic(env.name, d, 'warning');
    out.warnings.push(
      diagnostic('NYL-STATE-CORRUPT', 'warning', `${warning.message}; it is set aside at ${keptAt}`, {
        env: env.name,
        repair: 'signal-set-aside',
        data: { ...warning.data, keptAt },
      }),
    );
    out.repaired.push(record(d, `set aside at ${keptAt}`));
  }
  return out;
}

// --- The newest readable state.yaml ------------------------------------------------------------
// What state.yaml is restored from when the copy on the other state ref is damaged too: the newest
// readable version in the first-parent history of a state ref. state.yaml changes only with
// `state init` (and `--fresh`), `state delete` and `state move`, so the newest version Nyl wrote is
// the state as it was before the damage.

/** How far back the walk looks: state.yaml is damaged by recent edits, not by old ones. */
const MAX_COMMITS = 1000;

function firstParent(commitText: string): string | undefined {
  const header = commitText.slice(0, commitText.indexOf('\n\n'));
  return /^parent ([0-9a-f]{40})$/m.exec(header)?.[1];
}

async function newestReadableState(
  reader: ObjectReader,
  loc: StateLocation,
  tip: string | undefined,
): Promise<{ doc: EnvironmentStateDoc; commit: string } | undefined> {
  let oid = tip;
  for (let i = 0; oid && i < MAX_COMMITS; i++) {
    const [commit, blob] = await reader.readMany([oid, `${oid}:${statePathOf(loc, 'state.yaml')}`]);
    if (!commit || commit.type !== 'commit') return undefined;
    if (blob?.type === 'blob') {
      const parsed = parseStateDocument<EnvironmentStateDoc>('state', blob.content.toString());
      if (parsed.ok && parsed.value.environment === loc.environment) return { doc: parsed.value, commit: oid };
    }
    oid = firstParent(commit.content.toString());
  }
  return undefined;
}
