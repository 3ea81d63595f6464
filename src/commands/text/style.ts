/**
 * Colour of the text output, in one place: the few things that are coloured (the state or result
 * words of tables, the severity headings of diagnostics) and their escape codes. Colour is off
 * unless a render runs inside withColor(true) (the CLI's styled() decides per stream), so that
 * in-process callers and tests get plain text, byte for byte what it was without colour.
 */

let active = false;

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
