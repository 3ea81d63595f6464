/**
 * `nyl recover` (spec 04): imports the run of a broken lease without executing anything, clears a
 * unit's uncertain condition or non-retryable failure (--retry), or adopts the receipt a run
 * checkpointed for it (--accept RUN). One transition commit, operation `recover`; no run record.
 *
 * recover takes a broken lease over keeping its `broken` mark, so a recover that dies leaves the
 * lease broken for the next importer; one that fails before its commit lands puts the broken lease
 * back, and the run refs stay.
 */
import { byCodeUnits } from '../util/compare';
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { acquireLease, formatIdentity, type LeaseView, readLease } from '../lease/lease';
import { leaseStatus, RUN_OPERATIONS } from '../lease/record';
import { executionKey } from '../project/execution-key';
import { driverVersionOf, resolveEnvironment } from '../plan/resolve';
import type { StateOperationReport } from '../report/types';
import { evidenceRefName, evidenceRefs, readRunUnit } from '../run/dead-runs';
import { runRefName } from '../run/run-record';
import { breakFields, coordinationUpdates, takeOver, type Takeover } from '../run/takeover';
import { buildTransitions } from '../run/transition-plan';
import { applyHolds } from '../run/apply-holds';
import { readHoldSignals } from '../run/signals';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { runsPrefix } from '../state/location';
import { publishTransition } from '../lease/publish';
import { readEnvironmentState } from '../state/read';
import type { RefSnapshot, StateStore } from '../state/store';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { type EnvironmentRequest, openEnvironment } from './context';
import { stateOperationReport } from './report-base';

export interface RecoverRequest extends EnvironmentRequest {
  unit?: string;
  retry: boolean;
  accept?: string;
  reason?: string;
  waitMs?: number;
}

type Refuse = (code: 'NYL-RECOVER-NOTHING' | 'NYL-RECOVER-CHECKPOINT-MISSING' | 'NYL-RECOVER-KEY-MISMATCH' | 'NYL-RECOVER-REASON-REQUIRED', message: string, unit: string) => never;

export interface EvidenceEntry {
  run: string;
  source: 'run' | 'evidence';
  result: string;
  executionKey: string;
  uid: string;
  /** Would `--accept RUN` adopt this checkpoint? */
  acceptable: boolean;
}

function keyOf(d: DesiredUnitDoc | undefined): string | undefined {
  if (!d?.uid || !d.kind || !d.rendering) return undefined;
  return executionKey({ kind: d.kind, rendering: d.rendering, uid: d.uid, driverVersion: driverVersionOf(d.kind) });
}

/** Every checkpoint of the unit that a run ref or evidence ref holds, newest run first. */
async function listEvidence(store: StateStore, refs: RefSnapshot, unit: string, desired: DesiredUnitDoc | undefined, resolvedKey: string | undefined): Promise<EvidenceEntry[]> {
  const prefix = runsPrefix(store.loc);
  const sources: { run: string; oid: string; source: 'run' | 'evidence' }[] = [];
  for (const [ref, oid] of refs) if (ref.startsWith(prefix)) sources.push({ run: ref.slice(prefix.length), oid, source: 'run' });
  for (const e of evidenceRefs(store, refs)) if (e.unit === unit) sources.push({ run: e.run, oid: e.oid, source: 'evidence' });
  const docs = await Promise.all(sources.map((s) => readRunUnit(store, s.oid, unit)));
  const held = desired?.lifecycle?.state === 'held';
  const key = keyOf(desired);
  const entries: EvidenceEntry[] = [];
  sources.forEach((s, i) => {
    const d = docs[i];
    if (!d) return;
    const result = d.checkpoint ? d.checkpoint.result : 'started';
    entries.push({
      run: s.run,
      source: s.source,
      result,
      executionKey: d.executionKey,
      uid: d.uid,
      acceptable: !held && result === 'receipt' && d.uid === desired?.uid && d.executionKey === key && (resolvedKey === undefined || resolvedKey === key),
    });
  });
  return entries.sort((a, b) => byCodeUnits(b.run, a.run) || byCodeUnits(a.source, b.source));
}

export async function recover(rt: Runtime, req: RecoverRequest): Promise<StateOperationReport> {
  if (req.unit && req.retry === (req.accept !== undefined)) {
    fail('NYL-USAGE', '--unit takes exactly one of --retry and --accept <run>', { fix: 'pass --unit U --retry, or --unit U --accept <run> --reason <why>' });
  }
  if (!req.unit && (req.retry || req.accept !== undefined)) fail('NYL-USAGE', '--retry and --accept need --unit', { fix: 'pass --unit <name>' });
  if (req.accept !== undefined && !req.reason?.trim()) fail('NYL-USAGE', '--accept needs --reason', { fix: 'pass --reason "<why the checkpoint can be adopted>"' });
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    const { store, env, loc } = opened;
    const author = opened.author!;
    const envName = env.name;
    await store.ensureOpen();
    const report = stateOperationReport('recover', envName);
    const refs0 = await store.snapshot();
    const lease0 = await readLease(store, refs0);
    await store.requireNoUnpublishedWork(refs0);
    const importing = lease0?.record.broken !== undefined;
    if (lease0 && !importing && RUN_OPERATIONS.has(lease0.record.operation) && leaseStatus(lease0.record, rt.clock.now()) === 'expired') {
      // A dead run whose lease expired is imported by the next reconcile (or break it first):
      // recover imports only the run of a broken lease.
      fail('NYL-LEASE-BROKEN', `the lease of ${envName} expired at ${lease0.record.deadline} while ${lease0.record.operation} run ${lease0.record.run} held it; its run is not imported yet`, {
        env: envName,
        expired: true,
      });
    }
    if (!importing && !req.unit) {
      fail('NYL-RECOVER-NOTHING', `the lease of ${envName} is not broken, so there is no run to import`, { env: envName });
    }
    const acquired = await acquireLease(rt, store, {
      operation: 'recover',
      run: uuidv7(rt.clock.now()),
      author,
      durationMs: env.spec.lease.durationMs,
      initial: refs0,
      keepBroken: true,
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
    });
    const lease = acquired.handle;
    lease.startRenewal();
    const replaced: LeaseView | undefined = acquired.replaced;
    const broken = replaced?.record.broken !== undefined;
    let landed = false;
    try {
      await rt.faults.reach('lease-acquired');
      if (!broken && !req.unit) {
        // Another importer took the broken lease over and imported its run while we waited.
        fail('NYL-RECOVER-NOTHING', `the lease of ${envName} is no longer broken: another importer imported its run`, { env: envName });
      }
      const refs = acquired.snapshot;
      const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
      const state = view.state;
      if (!state || state.status !== 'active') {
        const finding = !state
          ? diagnostic('NYL-STATE-MISSING', 'warning', `${loc.desiredRef} holds no state for ${envName}`, { env: envName })
          : state.status === 'deleted'
            ? diagnostic('NYL-STATE-DELETED', 'warning', `the state of ${envName} was deleted with \`nyl state delete\``, { env: envName })
            : diagnostic('NYL-STATE-MOVED', 'warning', `the state of ${envName} moved to ${state.movedTo ?? 'another location'}`, { env: envName, movedTo: state.movedTo });
        if (req.unit) throw new NylError({ ...finding, severity: 'error' });
        if (!broken) throw new NylError(diagnostic('NYL-RECOVER-NOTHING', 'error', `the lease of ${envName} is not broken`, { env: envName }));
        const breaks = breakFields(replaced);
        if (state) {
          // Record the break in an unchanged commit, so the history says who broke what and why.
          const empty = { desired: new Map(), observed: new Map() };
          const transitions = buildTransitions(loc, refs, envName, empty, empty, { operation: 'recover', ...breaks }, { requestedBy: formatIdentity(author), ...(req.reason ? { reason: req.reason } : {}) }, [], true);
          const published = await publishTransition(rt, store, lease, transitions, author, { release: true, known: refs });
          report.desired = published.commits.get(loc.desiredRef);
          report.result = 'done';
        } else {
          await lease.release();
          report.result = 'done';
        }
        landed = true;
        Object.assign(report.details, breaks);
        report.warnings.push(finding);
        return report;
      }

      let takeover: Takeover | undefined;
      let desired = new Map(view.desiredUnits);
      let observed = new Map(view.observedUnits);
      if (broken) {
        takeover = await takeOver(store, refs, { project: opened.project, env, generation: state.generation, desired, observed, now: isoSeconds(rt.clock.now()) }, undefined, replaced);
        desired = takeover.imported.desired;
        observed = new Map(takeover.imported.observed);
        report.warnings.push(...takeover.imported.diagnostics);
      }
      const units: Record<string, unknown> = {};
      const recovered = [...(takeover?.imported.recovered ?? [])];
      if (req.unit) {
        const name = req.unit;
        const d = desired.get(name);
        const o = observed.get(name);
        if (!d && !o) fail('NYL-UNIT-UNKNOWN', `the state of ${envName} holds no unit ${name}`, { env: envName, unit: name });
        const now = resolveEnvironment({ project: opened.project, env, generation: state.generation, desired, observed, sourceCommit: opened.sourceCommit }).units.get(name);
        const evidence = await listEvidence(store, refs, name, d, now?.executionKey);
        report.details.unit = name;
        report.details.evidence = evidence;
        if (o?.condition) report.details.condition = o.condition;
        /** Refusals carry the evidence listing in details, as the report would. */
        const refuse: Refuse = (code, message, unit) => {
          throw new NylError(diagnostic(code, 'error', message, { env: envName, unit, data: { evidence } }), { unit, evidence, ...(o?.condition ? { condition: o.condition } : {}) });
        };
        if (!o?.condition) refuse('NYL-RECOVER-NOTHING', `${name} has no uncertain or failed condition`, name);
        const next: ObservedUnitDoc = { ...o };
        delete next.condition;
        if (req.retry) {
          if (o.condition.acknowledgementRequired && !req.reason?.trim()) {
            refuse('NYL-RECOVER-REASON-REQUIRED', `${name} failed with "${o.condition.reason}"; its driver requires an acknowledgement before a retry`, name);
          }
          if (req.reason?.trim()) next.acknowledgement = { by: formatIdentity(author), reason: req.reason, at: isoSeconds(rt.clock.now()) };
          units[name] = { action: 'retry' };
        } else {
          const run = req.accept!;
          if (d?.lifecycle?.state === 'held') {
            refuse('NYL-RECOVER-KEY-MISMATCH', `${name} is held: a held unit runs nothing, so nothing can be accepted for it`, name);
          }
          // A run may have both an evidence ref (its start, kept by a takeover) and a late run ref
          // (its receipt): read every source of that run and take the receipt.
          const sources = [refs.get(runRefName(store, run)), refs.get(evidenceRefName(store, name, run))].filter((o): o is string => o !== undefined);
          const docs = await Promise.all(sources.map((oid) => readRunUnit(store, oid, name)));
          const cp = docs.find((doc) => doc?.checkpoint?.result === 'receipt');
          if (!run || !cp?.checkpoint) {
            refuse('NYL-RECOVER-CHECKPOINT-MISSING', `run ${run || '(none)'} has no receipt checkpoint of ${name}`, name);
          }
          const wanted = keyOf(d);
          if (cp.uid !== d?.uid || cp.executionKey !== wanted || (now?.executionKey !== undefined && now.executionKey !== wanted)) {
            const why = cp.uid !== d?.uid || cp.executionKey !== wanted
              ? `its desired document has ${wanted ?? 'no execution key'} and uid ${d?.uid ?? 'none'}`
              : `the source now resolves ${name} to ${now!.executionKey}`;
            refuse('NYL-RECOVER-KEY-MISMATCH', `run ${run} executed ${name} with execution key ${cp.executionKey} and uid ${cp.uid}; ${why}`, name);
          }
          next.uid = cp.uid;
          next.receipt = { run, executionKey: cp.executionKey, finishedAt: cp.checkpoint.finishedAt, outputs: cp.checkpoint.outputs ?? {}, desired: cp.desired };
          next.lastRun = { run, result: 'executed', at: cp.checkpoint.finishedAt };
          units[name] = { action: 'accept', run };
        }
        observed.set(name, next);
        if (!recovered.includes(name)) recovered.push(name);
      }
      // Holds delivered to runs that died take effect here: a delivered hold always takes effect.
      const signals = await readHoldSignals(store, refs);
      const holds = applyHolds(envName, desired, observed, signals.map((s) => ({ unit: s.unit, by: s.by, at: s.at, ...(s.reason ? { reason: s.reason } : {}) })));
      desired = holds.desired;
      const before = { desired: view.desiredUnits, observed: view.observedUnits };
      const after = { desired, observed };
      const breaks = broken ? breakFields(replaced) : {};
      const leaseBroken = breaks.leaseBroken;
      const body = {
        operation: 'recover',
        units,
        imported: takeover?.imported.imported ?? [],
        recovered,
        held: holds.held,
        ...breaks,
      };
      const transitions = buildTransitions(loc, refs, envName, before, after, body, { requestedBy: formatIdentity(author), ...(req.reason ? { reason: req.reason } : {}) }, req.unit ? [req.unit] : [], leaseBroken !== undefined);
      const extraUpdates = [...coordinationUpdates(store, refs, takeover, observed), ...signals.map((s) => ({ ref: s.ref, expect: s.oid, to: null }))];
      await rt.faults.reach('before-recover-push');
      const published = await publishTransition(rt, store, lease, transitions, author, { release: true, known: refs, extraUpdates });
      landed = true;
      report.result = 'done';
      report.desired = published.refs.get(loc.desiredRef);
      report.observed = published.refs.get(loc.observedRef);
      if (takeover) {
        report.details.imported = takeover.imported.imported;
        report.details.runs = takeover.imported.consumed.map((r) => r.run);
      }
      report.details.recovered = recovered;
      if (holds.held.length > 0) report.details.held = holds.held;
      Object.assign(report.details, breaks);
      const uncertain = [...observed].filter(([, o]) => o.condition?.type === 'uncertain').map(([n]) => n);
      if (uncertain.length > 0) {
        report.warnings.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `units left uncertain: ${uncertain.join(', ')}`, { env: envName, units: uncertain, unit: uncertain[0] }));
      }
      await store.syncKnownBranches(published.refs);
      return report;
    } finally {
      lease.stopRenewal();
      if (!landed && !lease.lost) {
        await lease.end(replaced).catch(() => undefined);
      }
    }
  } finally {
    opened.close();
  }
}
