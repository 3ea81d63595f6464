/**
 * Whether a stream gets colour: the decision (--no-color, NO_COLOR, FORCE_COLOR, a terminal) and
 * styled(), which renders with colour on or off as the stream wants. What is coloured, and how,
 * is commands/text/style.ts: the renderers ask that module and never spell an escape code; with
 * colour off every function there returns its text unchanged, so plain output is byte for byte
 * what it was without colour.
 *
 * Colour is off unless a render runs inside styled() (or withColor(true)): in-process callers and
 * tests get plain text by default.
 */
import { withColor } from '../commands/text/style';

export interface ColorInputs {
  /** Whether the stream is a terminal (process.stdout.isTTY; undefined for a pipe or file). */
  isTTY: boolean | undefined;
  env: Record<string, string | undefined>;
  /** `--no-color` was given. */
  refused: boolean;
}

/**
 * The decision, first match wins: `--no-color`, then NO_COLOR with any non-empty value
 * (no-color.org), then FORCE_COLOR (non-empty; `0` and `false` mean no colour), for CI logs that
 * show colour but are no terminal; else colour only on a terminal that is not `TERM=dumb`.
 */
export function colorWanted({ isTTY, env, refused }: ColorInputs): boolean {
  if (refused) return false;
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  return isTTY === true && env.TERM !== 'dumb';
}

let refused = false;

/** `--no-color` (main.ts takes it off every command line): no colour on any stream. */
export function refuseColor(): void {
  refused = true;
}

/** render() coloured as the stream it is written to wants. */
export function styled(stream: { isTTY?: boolean }, render: () => string): string {
  return withColor(colorWanted({ isTTY: stream.isTTY, env: process.env, refused }), render);
}
