/** `nyl plan`: being built. */
import type { ReconcileReport } from '../report/types';
import type { Runtime } from '../util/runtime';
import type { EnvironmentRequest } from './context';

export interface PlanRequest extends EnvironmentRequest {
  units?: string[];
}

export async function plan(_rt: Runtime, _req: PlanRequest): Promise<ReconcileReport> {
  throw new Error('nyl plan is being built');
}
