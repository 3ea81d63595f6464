/**
 * Colour of the text output, in one place: whether a stream gets colour, and the few things that
 * are coloured (the state or result words of tables, the severity headings of diagnostics). The
 * renderers ask this module and never spell an escape code; with colour off every function
 * returns its text unchanged, so plain output is byte for byte what it was without colour.
 *
 * Colour is off unless a render runs inside styled() (or withColor(true)): in-process callers and
 * tests get plain text by default.
 */

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
let active = false;

/** `--no-color` (main.ts takes it off every command line): no colour on any stream. */
export function refuseColor(): void {
  refused = true;
}

/** render() with colour on or off; the previous setting afterwards. */
export function withColor<T>(on: boolean, render: () => T): T {
  const before = active;
  active = on;
  try {
    return render();
  } finally {
    active = before;
  }
}

/** render() coloured as the stream it is written to wants. */
export function styled(stream: { isTTY?: boolean }, render: () => string): string {
  return withColor(colorWanted({ isTTY: stream.isTTY, env: process.env, refused }), render);
}

type Tone = 'bad' | 'waiting' | 'good';

/** SGR codes: on, off (off resets only the attribute it set, so tones can nest in bold). */
const CODES: Record<Tone | 'bold', [number, number]> = { bad: [31, 39], waiting: [33, 39], good: [32, 39], bold: [1, 22] };

function paint(text: string, ...names: (Tone | 'bold')[]): string {
  if (!active || text === '') return text;
  return names.reduce((t, n) => `\u001b[${CODES[n][0]}m${t}\u001b[${CODES[n][1]}m`, text);
}

/**
 * The words of status STATE, reconcile RESULT, plan ACTION and verify DRIFT columns that deserve a
 * tone: red needs an operator, yellow waits for something, green is done. Others stay plain.
 */
const TONES: Record<string, Tone> = {
  failed: 'bad',
  uncertain: 'bad',
  recovered: 'bad',
  'held (uncertain)': 'bad',
  blocked: 'waiting',
  held: 'waiting',
  pending: 'waiting',
  outdated: 'waiting',
  'awaiting-dependencies': 'waiting',
  'awaiting-approval': 'waiting',
  drifted: 'waiting',
  leaving: 'waiting',
  'pending-teardown': 'waiting',
  'tearing-down': 'waiting',
  running: 'waiting',
  wait: 'waiting',
  executed: 'good',
  current: 'good',
  imported: 'good',
  'in-sync': 'good',
};

/** A unit's state, result, action or drift word, in its tone. */
export function stateWord(word: string): string {
  const tone = TONES[word];
  return tone ? paint(word, tone) : word;
}

/** A diagnostic's heading (`error NYL-X (units)`): bold red for errors, yellow for warnings. */
export function heading(severity: string, text: string): string {
  if (severity === 'error') return paint(text, 'bad', 'bold');
  if (severity === 'warning') return paint(text, 'waiting', 'bold');
  return paint(text, 'bold');
}
