/**
 * A run's approval options, checked before anything runs: `--approve U` and `--approve U=DIGEST`
 * (repeatable or comma-separated), `--approve-all`, and who approves (`--approved-by`,
 * `--approval-source`, else the CI context, else the Git user).
 *
 * An approval that cannot mean anything is an error (exit 1) before the lease is taken: a unit
 * the environment does not have (NYL-UNIT-UNKNOWN), one --unit excludes, one that can never need
 * an approval (no `approval.required` and safe to run again), and the desired-bound form for a
 * unit whose policy requires a reviewed digest (NYL-APPROVAL-INVALID). A unit that may need one
 * (recovery manual: a drift repair, a --reapply, a --local run) can be approved ahead; the run
 * uses the approval only when the planner asks for it.
 */
import { closest } from '../../util/closest';
import { fail } from '../../errors/diagnostic';
import type { Identity } from '../../git/object-writer';
import { approvalPolicy, mayNeedApproval } from '../../plan/approvals';
import type { ApprovalGrants } from '../../plan/input';
import { ownedGraph } from '../../plan/planner';
import type { Approver } from '../../run/run-state';
import type { OpenedEnvironment } from '../shared/context';

/** A digest as `nyl plan` prints it: an execution key or a plan digest. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export interface ApprovalOptions {
  /** Raw --approve items: `U` or `U=DIGEST`. */
  approve: string[];
  approveAll: boolean;
  approvedBy: string[];
  approvalSource?: string;
}

/** Parses the --approve items; a malformed digest or a unit named twice differently is a usage error. */
function parseItems(items: readonly string[]): Map<string, { digest?: string }> {
  const units = new Map<string, { digest?: string }>();
  for (const item of items) {
    const [unit, digest] = item.split('=', 2) as [string, string | undefined];
    if (digest !== undefined && !DIGEST.test(digest)) {
      fail('NYL-USAGE', `--approve ${item}: ${JSON.stringify(digest)} is not a digest`, {
        fix: 'pass --approve <unit>=<digest> with the digest `nyl plan -o json` prints (sha256: and 64 hex digits), or --approve <unit>',
      });
    }
    const earlier = units.get(unit);
    if (earlier && earlier.digest !== digest)
      fail('NYL-USAGE', `--approve names ${unit} twice with different digests`, { fix: `pass one --approve for ${unit}` });
    units.set(unit, digest === undefined ? {} : { digest });
  }
  return units;
}

/** Why this approval of a unit cannot be, or undefined when it can. */
function invalidApproval(
  opened: OpenedEnvironment,
  unit: string,
  digest: string | undefined,
  only: ReadonlySet<string> | undefined,
): { message: string; fix: string } | undefined {
  const env = opened.env.name;
  const resource = ownedGraph(opened.project, opened.env).byName.get(unit)!;
  if (only && !only.has(unit))
    return { message: `--approve ${unit}: --unit excludes ${unit} from this run`, fix: `name ${unit} with --unit too, or drop --approve ${unit}` };
  if (!mayNeedApproval(resource, opened.drivers)) {
    return {
      message: `--approve ${unit}: ${unit} needs no approval (it does not declare approval.required and is safe to run again)`,
      fix: `drop --approve ${unit}; \`nyl reconcile -e ${env}\` runs it without one`,
    };
  }
  if (digest === undefined && approvalPolicy(resource).requireDigest) {
    return {
      message: `--approve ${unit}: ${unit} requires a reviewed digest (approval.requireDigest)`,
      fix: `get its digest from \`nyl plan -e ${env}\`, then pass --approve ${unit}=<digest>`,
    };
  }
  return undefined;
}

/** The grants of a run's options, checked against the environment; undefined when it has none. */
export function approvalGrants(opened: OpenedEnvironment, options: ApprovalOptions, only: ReadonlySet<string> | undefined): ApprovalGrants | undefined {
  if (options.approvalSource !== undefined && options.approvedBy.length === 0)
    fail('NYL-USAGE', '--approval-source needs --approved-by', { fix: 'pass --approved-by <name> with --approval-source, or neither' });
  if (options.approve.length === 0 && !options.approveAll) return undefined;
  const units = parseItems(options.approve);
  const owned = ownedGraph(opened.project, opened.env).byName;
  const unknown = [...units.keys()].filter((u) => !owned.has(u));
  if (unknown.length > 0) {
    fail('NYL-UNIT-UNKNOWN', `--approve names ${unknown.join(', ')}, which environment ${opened.env.name} does not have`, {
      env: opened.env.name,
      units: unknown,
      guess: closest(unknown[0]!, owned.keys()),
      fix: `pick units of ${opened.env.name}: ${[...owned.keys()].sort().join(', ') || '(none)'}`,
    });
  }
  for (const [unit, { digest }] of units) {
    const problem = invalidApproval(opened, unit, digest, only);
    if (problem) fail('NYL-APPROVAL-INVALID', problem.message, { env: opened.env.name, unit, units: [unit], fix: problem.fix });
  }
  return { units, all: options.approveAll };
}

/** CI systems whose variables name who started the pipeline, in the order they are asked. */
const CI_ACTORS: { variable: string; source: string }[] = [
  { variable: 'GITHUB_ACTOR', source: 'github' },
  { variable: 'GITLAB_USER_LOGIN', source: 'gitlab' },
  { variable: 'BUILD_REQUESTEDFOR', source: 'azure' },
];

/**
 * Who approves: the names --approved-by asserts (with --approval-source, default `asserted`),
 * else the CI context's user, else the Git user who authors the commits.
 */
export function approverOf(options: ApprovalOptions, env: NodeJS.ProcessEnv, author: Identity): Approver {
  if (options.approvedBy.length > 0) return { by: options.approvedBy, source: options.approvalSource ?? 'asserted', asserted: true };
  for (const { variable, source } of CI_ACTORS) {
    const name = env[variable]?.trim();
    if (name) return { by: [name], source, asserted: false };
  }
  return { by: [`${author.name} <${author.email}>`], source: 'git', asserted: false };
}
