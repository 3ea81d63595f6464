/**
 * The digest a plan-bound approval (`--approve U=DIGEST`) names, shown by `nyl plan` and compared
 * by the run that applies it. Pure.
 *
 * For a kind whose driver plans (Terraform, OpenTofu) the digest binds more than the tool's
 * changes: the execution key the plan is for (source, inputs, what it consumed) and the receipt it
 * starts from. A plan id bound to the source revision alone approves whatever the target looks
 * like when the run comes; this one stops matching once another run applied the unit, its source
 * changed, or its planned changes differ, and the unit waits for a new review. The tool's own
 * stale-plan check still guards the saved plan between plan and apply inside the run.
 *
 * For every other kind nothing is planned: the digest is the execution key itself.
 */
import { createHash } from 'node:crypto';
import type { ReceiptRecord } from '../state/documents';
import { canonicalJson } from '../util/canonical-json';

interface DigestParts {
  executionKey: string;
  /** The driver plan's own digest (its changes), for a kind whose driver plans. */
  changes?: string;
  /** The receipt of the unit's incarnation the plan starts from, if it has one. */
  prior?: Pick<ReceiptRecord, 'run' | 'executionKey'>;
}

export function approvalDigest(parts: DigestParts): string {
  if (parts.changes === undefined) return parts.executionKey;
  const prior = parts.prior ? { run: parts.prior.run, executionKey: parts.prior.executionKey } : null;
  const bound = canonicalJson({ changes: parts.changes, executionKey: parts.executionKey, prior });
  return `sha256:${createHash('sha256').update(bound).digest('hex')}`;
}
