/**
 * A line diff for reviewers: what `nyl plan` shows of a unit whose rendering changed, the recorded
 * document against the new one, as the hunks of a unified diff (`@@ -a,b +c,d @@`, then lines
 * starting with ' ', '-' or '+'). Pure.
 *
 * Renderings are small (a spec, tens of lines), so a longest-common-subsequence table over the
 * lines that differ is cheap; the common head and tail are cut off first, which leaves a few
 * lines for the usual edit. Past MAX_CELLS (a generated document rewritten whole) the middle is
 * shown as removed and then added: still correct, only less minimal.
 */

type DiffOp = { op: ' ' | '-' | '+'; line: string };

/** Table cells of the LCS beyond which the middle is not aligned (memory, not correctness). */
const MAX_CELLS = 4_000_000;

/** The edit script from `before` to `after`: every line of both, in order, each kept, removed or added. */
export function diffOps(before: readonly string[], after: readonly string[]): DiffOp[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  const middle = a.length * b.length > MAX_CELLS ? replaced(a, b) : aligned(a, b);
  const kept = (lines: readonly string[]): DiffOp[] => lines.map((line) => ({ op: ' ', line }));
  return [...kept(before.slice(0, head)), ...middle, ...kept(before.slice(before.length - tail))];
}

function replaced(a: readonly string[], b: readonly string[]): DiffOp[] {
  return [...a.map((line): DiffOp => ({ op: '-', line })), ...b.map((line): DiffOp => ({ op: '+', line }))];
}

/** A minimal edit script by the LCS table; removals before additions where both are possible. */
function aligned(a: readonly string[], b: readonly string[]): DiffOp[] {
  const width = b.length + 1;
  // lcs[i * width + j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ op: ' ', line: a[i++]! });
      j++;
    } else if (j >= b.length || (i < a.length && lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) {
      out.push({ op: '-', line: a[i++]! });
    } else {
      out.push({ op: '+', line: b[j++]! });
    }
  }
  return out;
}

/** A hunk's range as unified diffs write it: `start,count`, start 1-based (0 for an empty side). */
function range(start: number, count: number): string {
  const first = count === 0 ? start : start + 1;
  return count === 1 ? `${first}` : `${first},${count}`;
}

/**
 * The hunks of a unified diff with `context` unchanged lines around each change; hunks whose
 * contexts touch are joined. Empty when nothing changed.
 */
export function unifiedDiff(before: readonly string[], after: readonly string[], context = 2): string[] {
  const ops = diffOps(before, after);
  const out: string[] = [];
  for (const [first, last] of changeGroups(ops, context)) out.push(...hunk(ops, Math.max(0, first - context), Math.min(ops.length, last + context + 1)));
  return out;
}

/** Runs of changes whose contexts touch (at most 2 * context unchanged lines apart): their first and last index. */
function changeGroups(ops: readonly DiffOp[], context: number): [number, number][] {
  const groups: [number, number][] = [];
  ops.forEach((o, k) => {
    if (o.op === ' ') return;
    const open = groups[groups.length - 1];
    if (open && k - open[1] <= 2 * context + 1) open[1] = k;
    else groups.push([k, k]);
  });
  return groups;
}

/** One hunk of ops[from..to): its head with both ranges, then its lines. */
function hunk(ops: readonly DiffOp[], from: number, to: number): string[] {
  let oldStart = 0;
  let newStart = 0;
  for (let k = 0; k < from; k++) {
    if (ops[k]!.op !== '+') oldStart++;
    if (ops[k]!.op !== '-') newStart++;
  }
  const lines = ops.slice(from, to);
  const oldCount = lines.filter((o) => o.op !== '+').length;
  const newCount = lines.filter((o) => o.op !== '-').length;
  return [`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`, ...lines.map((o) => `${o.op}${o.line}`)];
}
