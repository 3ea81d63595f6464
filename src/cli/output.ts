/**
 * -o: the output format a command line asks for: text (or table) and json for every command, and
 * dot and mermaid for a command that draws its report (its registry entry says `drawings`).
 */
import { diagnostic, NylError } from '../errors/diagnostic';
import type { Output, ParsedCommand } from '../commands/command';
import { stringOpt } from '../commands/request';

export function outputOf(p: ParsedCommand): Output {
  const o = stringOpt(p, 'output') ?? 'text';
  const drawings = p.spec.drawings === true;
  if (o === 'json') return 'json';
  if (o === 'text' || o === 'table') return 'text';
  if (drawings && (o === 'dot' || o === 'mermaid')) return o;
  throw new NylError(diagnostic('NYL-USAGE', 'error', `-o ${o} is not an output format${drawings ? '' : ` of nyl ${p.spec.words.join(' ')}`}`, { fix: drawings ? 'pass -o text, -o dot, -o mermaid or -o json' : 'pass -o text, -o table or -o json' }));
}
