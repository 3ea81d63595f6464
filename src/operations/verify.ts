/** `nyl verify`: being built. */
import type { StateOperationReport } from '../report/types';
import type { Runtime } from '../util/runtime';
import type { EnvironmentRequest } from './context';

export interface VerifyRequest extends EnvironmentRequest {
  units?: string[];
  waitMs?: number;
}

export async function verify(_rt: Runtime, _req: VerifyRequest): Promise<StateOperationReport> {
  throw new Error('nyl verify is being built');
}
