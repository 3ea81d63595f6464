/**
 * Diagnostics are data: a code from the catalog, a message, its fix and structured details.
 * Operations return them in reports or throw them inside NylError; the CLI renders them.
 */
import { type FixParams, type NylCode, fixFor } from './catalog';

export type Severity = 'error' | 'warning' | 'note';

export interface Diagnostic {
  code: NylCode;
  severity: Severity;
  message: string;
  fix: string;
  units?: string[];
  /** Where in source, for NYL-SOURCE-INVALID. */
  location?: SourceLocation;
  /** Structured data for machines: lease holder, failed argv and stderr, ... */
  data?: Record<string, unknown>;
}

export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
  pointer?: string;
}

export interface DiagnosticInit extends FixParams {
  units?: string[];
  location?: SourceLocation;
  data?: Record<string, unknown>;
}

export function diagnostic(code: NylCode, severity: Severity, message: string, init: DiagnosticInit = {}): Diagnostic {
  const d: Diagnostic = { code, severity, message, fix: fixFor(code, init) };
  if (init.units && init.units.length > 0) d.units = [...init.units];
  if (init.location) d.location = init.location;
  if (init.data) d.data = init.data;
  return d;
}

/** An operation's refusal: carries the diagnostic(s) up to the CLI, which alone maps them to exits. */
export class NylError extends Error {
  readonly diagnostics: Diagnostic[];
  /** Extra fields for the report (e.g. details.location when state init fails later). */
  readonly details: Record<string, unknown> | undefined;

  constructor(diagnostics: Diagnostic | Diagnostic[], details?: Record<string, unknown>) {
    const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics];
    super(list.map((d) => `${d.code}: ${d.message}`).join('; '));
    this.name = 'NylError';
    this.diagnostics = list;
    this.details = details;
  }

  get code(): NylCode {
    return this.diagnostics[0]!.code;
  }
}

export function fail(code: NylCode, message: string, init: DiagnosticInit = {}): never {
  throw new NylError(diagnostic(code, 'error', message, init));
}
