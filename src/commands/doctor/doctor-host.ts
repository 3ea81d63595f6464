/**
 * `nyl doctor host URL [--prefix P]`: checks whether a Git host can hold orchestration state, by
 * the five pushes of the host check (git/host-check.ts) against a scratch namespace of the
 * repository at URL, for the default coordination prefix refs/nyl/ and the branch prefix
 * refs/heads/nyl-run/ (or only P). It needs no project and touches no state: a team runs it once
 * against a scratch repository of a new host.
 *
 * Exit 0 when a prefix works; a host that works only with the branch prefix is a warning naming
 * the setting (NYL-HOST-BRANCH-PREFIX); none working is NYL-HOST-INCOMPATIBLE (exit 1), naming
 * atomic pushes when the host does not support them. The namespace is cleaned before (what a
 * killed run left) and after (what this run created), whatever failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diagnostic } from '../../errors/diagnostic';
import { checkCommits, checkPrefix, cleanNamespace } from '../../git/host-check';
import { type DoctorHostReport, emptyDiagnostics, FORMAT_VERSION, type HostPrefixCheck, REPORT_API_VERSION } from '../../report/types';
import { DEFAULT_PREFIX } from '../../state/location';
import type { Runtime } from '../../util/runtime';
import { uuidv7 } from '../../util/uuid';

const BRANCH_PREFIX = 'refs/heads/nyl-run/';

interface DoctorHostRequest {
  url: string;
  /** Only this prefix (ending in '/'); default: both refs/nyl/ and refs/heads/nyl-run/. */
  prefix?: string;
}

export async function doctorHost(rt: Runtime, req: DoctorHostRequest): Promise<DoctorHostReport> {
  const prefixes = req.prefix ? [req.prefix] : [DEFAULT_PREFIX, BRANCH_PREFIX];
  const scratch = mkdtempSync(join(tmpdir(), 'nyl-doctor-'));
  try {
    const repo = join(scratch, 'scratch.git');
    await rt.git.text(scratch, ['init', '-q', '--bare', repo]);
    const run = uuidv7(rt.clock.now());
    await cleanNamespace(rt.git, repo, req.url, prefixes);
    const commits = await checkCommits(rt.git, repo, run);
    const checks: HostPrefixCheck[] = [];
    let atomicUnsupported = false;
    for (const prefix of prefixes) {
      const steps = await checkPrefix(rt.git, repo, req.url, prefix, run, commits);
      atomicUnsupported ||= steps.some((s) => s.atomicUnsupported);
      // The flag stays out of the report: its steps are what the schema names.
      checks.push({ prefix, works: steps.every((s) => s.verdict === 'passed'), steps: steps.map(({ atomicUnsupported: _, ...step }) => step) });
    }
    const leftovers = await cleanNamespace(rt.git, repo, req.url, prefixes);
    return verdictOf(req.url, checks, leftovers, atomicUnsupported);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The report: which prefix to use, and why not the others. `atomic`: a push failed because the
 * host does not support atomic pushes (host-check's flag, never read back from a step's text).
 */
function verdictOf(url: string, checks: HostPrefixCheck[], leftovers: string[], atomic: boolean): DoctorHostReport {
  const report: DoctorHostReport = {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'DoctorHostReport',
    operation: 'doctor-host',
    environment: '',
    url,
    prefixes: checks,
    leftovers,
    details: {},
    ...emptyDiagnostics(),
  };
  const working = checks.filter((c) => c.works).map((c) => c.prefix);
  if (working.length > 0) report.recommended = working.includes(DEFAULT_PREFIX) ? DEFAULT_PREFIX : working[0]!;
  if (report.recommended === BRANCH_PREFIX && checks.some((c) => c.prefix === DEFAULT_PREFIX)) {
    report.warnings.push(
      diagnostic(
        'NYL-HOST-BRANCH-PREFIX',
        'warning',
        `${url} holds orchestration state only with the coordination refs under ${BRANCH_PREFIX}: it refused the default ${DEFAULT_PREFIX}`,
        {},
      ),
    );
  }
  if (working.length === 0) {
    const why = atomic ? 'it does not support atomic pushes' : `a step failed under ${checks.map((c) => c.prefix).join(' and under ')}`;
    report.errors.push(
      diagnostic('NYL-HOST-INCOMPATIBLE', 'error', `${url} cannot hold orchestration state: ${why}`, {
        ...(atomic ? { atomic: true, data: { atomic: true } } : {}),
      }),
    );
  }
  return report;
}
