/**
 * `nyl recover --unit U (--retry | --accept RUN)`: the decision about one unit, after an import
 * in the same command. The report's details show the unit's condition and the evidence: every
 * checkpoint of the unit a run ref or evidence ref holds, newest run first, with whether
 * `--accept` would adopt it. Refusals carry the same listing.
 */
import { closest } from '../../util/closest';
import { diagnostic, fail, NylError } from '../../errors/diagnostic';
import { versionOf } from '../../drivers/kinds';
import { formatIdentity } from '../../lease/lease';
import { planEnvironment } from '../../plan/planner';
import { checkpointMatches, isHeld, keyNow } from '../../plan/unit-view';
import { executionKey } from '../../project/execution-key';
import type { StateOperationReport } from '../../report/types';
import { evidenceRefName, evidenceRefs, lateEvidenceRefName } from '../../run/evidence';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../../state/documents';
import { damageDiagnostic } from '../../state/damage';
import { readRunUnit, readRunUnitRecord, receiptOf, runRefName, type RunUnitDoc } from '../../state/run-record';
import { runsPrefix } from '../../state/location';
import type { RefSnapshot } from '../../state/store';
import { byCodeUnits } from '../../util/compare';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { type OpenedEnvironment, planInputOf } from '../shared/context';

export interface RecoverOptions {
  unit?: string;
  retry: boolean;
  accept?: string;
  reason?: string;
  waitMs?: number;
}

/** What recover decided: the documents after the import and the unit's action. */
export interface RecoverWork {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  units: Record<string, unknown>;
  recovered: string[];
}

type RefusalCode = 'NYL-RECOVER-NOTHING' | 'NYL-RECOVER-CHECKPOINT-MISSING' | 'NYL-RECOVER-KEY-MISMATCH' | 'NYL-RECOVER-REASON-REQUIRED';

interface EvidenceEntry {
  run: string;
  source: 'run' | 'evidence';
  result: string;
  executionKey: string;
  uid: string;
  /** Would `--accept RUN` adopt this checkpoint? */
  acceptable: boolean;
}

/** What one unit's decision works with. */
interface UnitCase {
  name: string;
  desired: DesiredUnitDoc | undefined;
  observed: ObservedUnitDoc | undefined;
  /** The execution key the unit's recorded desired document has. */
  recordedKey: string | undefined;
  /** The execution key the source resolves the unit to now, when it resolves. */
  resolvedKey: string | undefined;
  evidence: EvidenceEntry[];
}

function keyOf(opened: OpenedEnvironment, d: DesiredUnitDoc | undefined): string | undefined {
  if (!d?.uid || !d.kind || !d.rendering) return undefined;
  return executionKey({
    kind: d.kind,
    rendering: d.rendering,
    uid: d.uid,
    driverVersion: versionOf(d.kind, opened.drivers),
    ...(d.reads ? { reads: d.reads } : {}),
  });
}

/**
 * Every checkpoint of the unit that a run ref or evidence ref holds, newest run first. A damaged
 * record is listed with result `damaged` (never acceptable) and reported as a warning.
 */
async function listEvidence(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  c: Omit<UnitCase, 'evidence'>,
  report: StateOperationReport,
): Promise<EvidenceEntry[]> {
  const { store } = opened;
  const prefix = runsPrefix(store.loc);
  const sources: { run: string; ref: string; oid: string; source: 'run' | 'evidence' }[] = [];
  for (const [ref, oid] of refs) if (ref.startsWith(prefix)) sources.push({ run: ref.slice(prefix.length), ref, oid, source: 'run' });
  for (const e of evidenceRefs(store, refs)) if (e.unit === c.name) sources.push({ run: e.run, ref: e.ref, oid: e.oid, source: 'evidence' });
  const records = await Promise.all(sources.map((s) => readRunUnitRecord(store.reader, s.ref, s.oid, c.name)));
  const held = isHeld(c.desired);
  const keyNow = unitKeyNow(c);
  const entries = sources.flatMap((s, i) => {
    const { doc: d, damage } = records[i]!;
    if (damage) {
      report.warnings.push(damageDiagnostic(opened.env.name, { ...damage, document: s.source === 'evidence' ? 'evidence' : 'run-unit' }, 'warning'));
      return [{ run: s.run, source: s.source, result: 'damaged', executionKey: '', uid: '', acceptable: false }];
    }
    if (!d) return [];
    const result = d.checkpoint ? d.checkpoint.result : 'started';
    const acceptable = !held && result === 'receipt' && checkpointMatches(d, c.desired?.uid, keyNow);
    return [{ run: s.run, source: s.source, result, executionKey: d.executionKey, uid: d.uid, acceptable }];
  });
  return entries.sort((a, b) => byCodeUnits(b.run, a.run) || byCodeUnits(a.source, b.source));
}

/** The key a checkpoint must have to be accepted: the recorded one, unless source moved on. */
function unitKeyNow(c: Pick<UnitCase, 'recordedKey' | 'resolvedKey'>): string | undefined {
  return keyNow(c.recordedKey, c.resolvedKey);
}

function refusal(opened: OpenedEnvironment, c: UnitCase, code: RefusalCode, message: string): NylError {
  const condition = c.observed?.condition;
  return new NylError(diagnostic(code, 'error', message, { env: opened.env.name, unit: c.name, data: { evidence: c.evidence } }), {
    unit: c.name,
    evidence: c.evidence,
    ...(condition ? { condition } : {}),
  });
}

/** --retry: clears the condition, recording an acknowledgement when a reason is given. */
function retry(rt: Runtime, opened: OpenedEnvironment, c: UnitCase, req: RecoverOptions, next: ObservedUnitDoc): Record<string, unknown> {
  const condition = c.observed!.condition!;
  if (condition.acknowledgementRequired && !req.reason?.trim()) {
    throw refusal(
      opened,
      c,
      'NYL-RECOVER-REASON-REQUIRED',
      `${c.name} failed with "${condition.reason}"; its driver requires an acknowledgement before a retry`,
    );
  }
  if (req.reason?.trim()) next.acknowledgement = { by: formatIdentity(opened.author!), reason: req.reason, at: isoSeconds(rt.clock.now()) };
  return { action: 'retry' };
}

/**
 * --accept RUN: adopts the receipt RUN checkpointed, only for what the unit runs now. A run may
 * have both an evidence ref (its start, kept by a takeover) and a late run ref (its receipt):
 * every source of that run is read and the receipt taken.
 */
async function accept(opened: OpenedEnvironment, refs: RefSnapshot, c: UnitCase, run: string, next: ObservedUnitDoc): Promise<Record<string, unknown>> {
  const { store } = opened;
  if (isHeld(c.desired)) throw refusal(opened, c, 'NYL-RECOVER-KEY-MISMATCH', `${c.name} is held: a held unit runs nothing, so nothing can be accepted for it`);
  const sources = [runRefName(store.loc, run), evidenceRefName(store, c.name, run), lateEvidenceRefName(store, c.name, run)]
    .map((ref) => refs.get(ref))
    .filter((o): o is string => o !== undefined);
  const docs = await Promise.all(sources.map((oid) => readRunUnit(store.reader, oid, c.name)));
  const cp: RunUnitDoc | undefined = docs.find((doc) => doc?.checkpoint?.result === 'receipt');
  if (!run || !cp?.checkpoint) throw refusal(opened, c, 'NYL-RECOVER-CHECKPOINT-MISSING', `run ${run || '(none)'} has no receipt checkpoint of ${c.name}`);
  if (!checkpointMatches(cp, c.desired?.uid, unitKeyNow(c))) {
    const why = !checkpointMatches(cp, c.desired?.uid, c.recordedKey)
      ? `its desired document has ${c.recordedKey ?? 'no execution key'} and uid ${c.desired?.uid ?? 'none'}`
      : `the source now resolves ${c.name} to ${c.resolvedKey}`;
    throw refusal(opened, c, 'NYL-RECOVER-KEY-MISMATCH', `run ${run} executed ${c.name} with execution key ${cp.executionKey} and uid ${cp.uid}; ${why}`);
  }
  next.uid = cp.uid;
  // Spec: the accepted receipt keeps a copy of the desired document it was produced for.
  next.receipt = { ...receiptOf(run, cp, cp.checkpoint), keepsDesiredCopy: true };
  next.lastRun = { run, result: 'executed', at: cp.checkpoint.finishedAt };
  return { action: 'accept', run };
}

/** Applies --retry or --accept to the unit named by --unit, into work. */
export async function decideUnit(
  rt: Runtime,
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  generation: number,
  req: RecoverOptions,
  work: RecoverWork,
  report: StateOperationReport,
): Promise<void> {
  const name = req.unit!;
  const desired = work.desired.get(name);
  const observed = work.observed.get(name);
  if (!desired && !observed) {
    const guess = closest(name, [...work.desired.keys(), ...work.observed.keys()]);
    fail('NYL-UNIT-UNKNOWN', `the state of ${opened.env.name} holds no unit ${name}`, { env: opened.env.name, unit: name, guess });
  }
  const plan = planEnvironment(planInputOf(opened, generation, work));
  const base = { name, desired, observed, recordedKey: keyOf(opened, desired), resolvedKey: plan.units.get(name)?.executionKey };
  const c: UnitCase = { ...base, evidence: await listEvidence(opened, refs, base, report) };
  report.details.unit = name;
  report.details.evidence = c.evidence;
  if (observed?.condition) report.details.condition = observed.condition;
  if (!observed?.condition) throw refusal(opened, c, 'NYL-RECOVER-NOTHING', `${name} has no uncertain or failed condition`);
  const next: ObservedUnitDoc = { ...observed };
  delete next.condition;
  work.units[name] = req.retry ? retry(rt, opened, c, req, next) : await accept(opened, refs, c, req.accept!, next);
  work.observed.set(name, next);
  if (!work.recovered.includes(name)) work.recovered.push(name);
}
