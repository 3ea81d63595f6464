/** The empty StateOperationReport every state operation starts from. */
import { emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION, type StateOperationReport } from '../report/types';

export function stateOperationReport(operation: string, environment: string): StateOperationReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'StateOperationReport',
    operation,
    environment,
    result: 'unchanged',
    details: {},
    ...emptyDiagnostics(),
  };
}
