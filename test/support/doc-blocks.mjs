// The runnable examples of a Markdown page (docs/tutorial.md, "How this page is tested"): its
// fenced ```sh and ```console blocks turned into one bash script, and the check of each command's
// output against the output the page shows. Kept apart from the e2e test so that the reader and
// the matcher are tested in process (test/unit/doc-blocks.test.mjs).
//
// Conventions:
// - ```sh: each command (a line, with `\` continuations and heredocs) must exit 0; output unchecked.
// - ```console: `$ cmd` lines are commands, the lines after one are its output; `...` matches any
//   number of lines. A command must exit 0 unless the next command is `echo $?`.
// - `<!-- doc-test: write F -->` / `<!-- doc-test: append F -->` before a ```yaml block writes it
//   to F; `<!-- doc-test: skip why -->` before a sh/console block skips it.

const FENCE = /^(`{3,})\s*([\w-]*)\s*$/;
const MARK = /^<!--\s*doc-test:\s*(write|append|skip)\s+(.+?)\s*-->\s*$/;

/**
 * The fenced blocks of a page, in order: { lang, body (lines), line (1-based, of the fence), mark }
 * where mark is { verb, arg } from a doc-test comment on the line before the fence (blank lines
 * between allowed), or undefined.
 */
export function fencedBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  let pending;
  for (let i = 0; i < lines.length; i++) {
    const mark = MARK.exec(lines[i]);
    if (mark) {
      pending = { verb: mark[1], arg: mark[2] };
      continue;
    }
    const open = FENCE.exec(lines[i]);
    if (!open) {
      if (lines[i].trim() !== '') pending = undefined;
      continue;
    }
    const body = [];
    let j = i + 1;
    while (j < lines.length && lines[j].trimEnd() !== open[1]) body.push(lines[j++]);
    blocks.push({ lang: open[2], body, line: i + 1, mark: pending });
    pending = undefined;
    i = j;
  }
  return blocks;
}

/** Splits shell lines into commands: a line ending in `\` continues, and a heredoc runs to its end word. */
function shellCommands(lines) {
  const commands = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    const command = [lines[i]];
    while (command[command.length - 1].endsWith('\\') && i + 1 < lines.length) command.push(lines[++i]);
    const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(command.join('\n'));
    if (heredoc) while (i + 1 < lines.length && lines[i].trim() !== heredoc[1]) command.push(lines[++i]);
    commands.push(command.join('\n'));
  }
  return commands;
}

/** A console block's commands, each with the output lines the page shows for it. */
function consoleCommands(lines) {
  const steps = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('$ ')) {
      if (steps.length === 0) throw new Error(`console block: output before the first command: ${lines[i]}`);
      steps[steps.length - 1].expected.push(lines[i]);
      continue;
    }
    const command = [lines[i].slice(2)];
    while (command[command.length - 1].endsWith('\\') && i + 1 < lines.length) command.push(lines[++i].replace(/^> /, ''));
    steps.push({ command: command.join('\n'), expected: [] });
  }
  return steps;
}

/**
 * The page as steps to run in order: { command, expected (lines, or undefined when unchecked),
 * line, file? } plus the blocks it skipped ({ line, why }).
 */
export function docSteps(markdown) {
  const steps = [];
  const skipped = [];
  for (const block of fencedBlocks(markdown)) {
    if (block.mark?.verb === 'write' || block.mark?.verb === 'append') {
      const redirect = block.mark.verb === 'write' ? '>' : '>>';
      const text = block.body.join('\n');
      if (text.includes('__DOC_EOF__')) throw new Error('a written block holds the heredoc end word');
      steps.push({ command: `cat ${redirect} ${block.mark.arg} <<'__DOC_EOF__'\n${text}\n__DOC_EOF__`, line: block.line });
      continue;
    }
    if (block.lang !== 'sh' && block.lang !== 'console') continue;
    if (block.mark?.verb === 'skip') {
      skipped.push({ line: block.line, why: block.mark.arg });
      continue;
    }
    if (block.lang === 'sh') for (const command of shellCommands(block.body)) steps.push({ command, line: block.line });
    else for (const step of consoleCommands(block.body)) steps.push({ ...step, line: block.line });
  }
  return { steps, skipped };
}

/**
 * The bash script that runs the steps in one session: each step's output (stdout and stderr
 * together) to OUT/<i>.out and its exit code to OUT/<i>.rc. A step that must succeed and fails
 * stops the script (exit 100); `$?` after a step is the step's own exit code, for `echo $?`.
 */
export function docScript(steps, outDir) {
  const parts = ['set -u'];
  steps.forEach((step, i) => {
    const next = steps[i + 1];
    const shownExit = next !== undefined && next.command.trim() === 'echo $?';
    parts.push(`{ ${step.command}\n} > '${outDir}/${i}.out' 2>&1 < /dev/null`);
    parts.push(`__rc=$?; echo "$__rc" > '${outDir}/${i}.rc'`);
    if (!shownExit) parts.push('[ "$__rc" -eq 0 ] || exit 100');
    parts.push('( exit "$__rc" )');
  });
  return `${parts.join('\n')}\n`;
}

/** What varies from run to run: run ids, commit and object ids, times, durations, runs of spaces. */
export function normalize(line, home) {
  let text = home ? line.split(home).join('/home/alice') : line;
  text = text.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>');
  text = text.replace(/\b[0-9a-f]{40}\b/g, '<oid>').replace(/\b[0-9a-f]{12}\b/g, '<oid>');
  text = text.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, '<time>');
  text = text.replace(/\b\d+(\.\d+)?(ms|s)\b/g, '<duration>');
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Whether actual output lines match the shown ones: each shown line equals an actual line after
 * normalize(), in order and without gaps, except that a shown `...` matches any number of lines.
 * Returns undefined on a match, else a description of the first difference.
 */
export function outputMismatch(expected, actual, home) {
  const want = expected.map((l) => (l.trim() === '...' ? '...' : normalize(l)));
  const got = actual.map((l) => normalize(l, home));
  while (want.length > 0 && want[want.length - 1] === '') want.pop();
  while (got.length > 0 && got[got.length - 1] === '') got.pop();
  const memo = new Map();
  const match = (w, g) => {
    const key = `${w},${g}`;
    if (memo.has(key)) return memo.get(key);
    let ok;
    if (w === want.length) ok = g === got.length;
    else if (want[w] === '...') ok = match(w + 1, g) || (g < got.length && match(w, g + 1));
    else ok = g < got.length && want[w] === got[g] && match(w + 1, g + 1);
    memo.set(key, ok);
    return ok;
  };
  if (match(0, 0)) return undefined;
  let w = 0;
  let g = 0;
  while (w < want.length && g < got.length && want[w] === got[g]) w++, g++;
  return `first difference at shown line ${w + 1}: shown ${JSON.stringify(want[w] ?? '(end)')}, printed ${JSON.stringify(got[g] ?? '(end)')}`;
}
