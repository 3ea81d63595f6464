/**
 * `nyl state reseal`: seal the observed state's sensitive values again with the first key.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateResealCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'reseal'],
  summary: "Seal an environment's sensitive values again with the first key, after a key rotation",
  usage: 'nyl state reseal -e <env> [--reason <text>] [options] [PATH]',
  description:
    'After a rotation (the new key first in NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE, the old one after it), opens every sealed value of the observed state and seals it again with the first key ' +
    "(aes256gcm:v2, bound to the environment, the unit and the output), and replaces the digest of each by the first key's: one observed commit (operation state-reseal), under the lease; " +
    'the desired state does not change. Values already sealed and digested by the first key are left alone; when nothing changes nothing is written. ' +
    'A value no configured key opens refuses the whole reseal (NYL-RESEAL-UNOPENED, exit 1), and so do run refs not imported yet, whose checkpoints may hold old-key seals (NYL-RESEAL-RUNS-UNIMPORTED, exit 1: import them with nyl reconcile or nyl recover first); nothing is written. ' +
    'Digests of values a Terraform or OpenTofu backend keeps are left (NYL-RESEAL-KEPT): the key they name stays needed until their units execute again (nyl reconcile --unit <unit> --reapply). ' +
    'A unit that consumes a value whose digest changed executes once on the next reconcile (NYL-RESEAL-CONSUMERS), since its execution key covers the digest. ' +
    'Remove the old key once the next reconcile has run those consumers. The state history keeps the old seals: after a key leak, rotate the secrets themselves.',
  options: [ENV, REASON, WAIT, AUTHOR, OUTPUT],
  examples: ['nyl state reseal -e prod --reason "yearly key rotation"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, waitOf } = await import('../request');
    const { reseal } = await import('./reseal');
    return reseal(rt, { ...common(p), ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
