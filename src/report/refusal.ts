/**
 * The short form a command's JSON takes when it refused before it ran: the CLI's refusals, and
 * a section of a run over several environments that was refused, blocked or not started. Pure.
 */
import type { Diagnostic } from '../errors/diagnostic';
import { FORMAT_VERSION, type RefusalDocument, REPORT_API_VERSION, type Report } from './types';

/** The one JSON document of a refusal (a `kind` of every command's family; no `operation` for status). */
export function refusalDocument(
  kind: Report['kind'],
  operation: string | undefined,
  environment: string,
  diagnostics: Diagnostic[],
  details: Record<string, unknown> = {},
): RefusalDocument {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind,
    ...(operation !== undefined ? { operation } : {}),
    environment,
    result: 'refused',
    errors: diagnostics,
    warnings: [],
    notes: [],
    details,
  };
}
