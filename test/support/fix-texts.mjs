// Running the fix texts Nyl prints exactly as printed: the diagnostics of a result (its JSON
// report, or the text blocks on stdout and stderr), the `nyl ...` commands a fix names in
// backticks, a shell-words split of each that honours quotes the way sh does, and the
// placeholders in angle brackets (`<why>`, `<run>`) that only the reader can fill.
//
// Invariant: a printed command is never handed to a shell. Its words become the argv of the built
// CLI (cli.mjs spawns it), so a test runs what a user would paste, and nothing else.
import { nylAsync } from './cli.mjs';

/** Error, warning and note diagnostics of a result: the JSON report's, else the text blocks'. */
export function diagnosticsOf(result) {
  const j = result.json;
  if (j) return [...(j.errors ?? []), ...(j.warnings ?? []), ...(j.notes ?? [])];
  return textDiagnostics(`${result.stdout}\n${result.stderr}`);
}

/**
 * Text blocks as the CLI renders them: `severity CODE (units)`, indented message lines, and an
 * indented `fix: ...` line.
 */
function textDiagnostics(text) {
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^(error|warning|note) (NYL-[A-Z0-9-]+)(?: \((.*)\))?$/.exec(lines[i]);
    if (!head) continue;
    const d = { severity: head[1], code: head[2], message: '', fix: '' };
    if (head[3]) d.units = head[3].split(', ');
    for (i++; i < lines.length && lines[i].startsWith('  '); i++) {
      const line = lines[i].slice(2);
      if (line.startsWith('fix: ')) d.fix = line.slice('fix: '.length);
      else d.message += d.message ? `\n${line}` : line;
    }
    i--;
    out.push(d);
  }
  return out;
}

/** The `nyl ...` commands a fix names, in the order it names them: every backticked span that starts with `nyl `. */
export function nylCommands(fix) {
  return [...fix.matchAll(/`(nyl [^`]*)`/g)].map((m) => m[1]);
}

/**
 * Splits a command line into words as sh does, without expanding anything: blanks separate words;
 * single quotes keep everything literally; double quotes keep everything but `\"`, `\\`, `\$` and
 * `` \` ``; a backslash outside quotes keeps the next character. An unterminated quote throws.
 */
export function shellWords(text) {
  const words = [];
  let word;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unterminated ' in ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const [value, end] = doubleQuoted(text, i + 1);
      word = (word ?? '') + value;
      i = end;
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The value of a double-quoted string that starts at `from`, and the index of its closing quote. */
function doubleQuoted(text, from) {
  let value = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"') return [value, i];
    if (c === '\\' && '"\\$`'.includes(text[i + 1] ?? '')) value += text[++i];
    else value += c;
  }
  throw new Error(`unterminated " in ${text}`);
}

/**
 * The argv (after `nyl`) of a printed command. A word that is a placeholder in angle brackets is
 * replaced by fill[placeholder]; a placeholder without a fill, or one inside a longer word, throws,
 * so that nothing the reader cannot run slips through.
 */
export function argvOf(command, fill = {}) {
  const words = shellWords(command);
  if (words[0] !== 'nyl') throw new Error(`not a nyl command: ${command}`);
  return words.slice(1).map((w) => {
    if (!/[<>]/.test(w)) return w;
    if (/^<[^<>]+>$/.test(w) && fill[w] !== undefined) return fill[w];
    throw new Error(`the placeholder ${w} of \`${command}\` has no fill`);
  });
}

/** Runs `nyl argv...` in cwd without a shell and without blocking the event loop: { code, stdout, stderr, json }. */
export function runNyl(cwd, argv, { env = {} } = {}) {
  return nylAsync(cwd, argv, { env }).done;
}

/**
 * Starts `nyl argv...` in cwd: { child, done, stderrSoFar() }, where stderrSoFar() is what the
 * process wrote to stderr until now (the unit start and end lines a test waits for).
 */
export function startNyl(cwd, argv, { env = {} } = {}) {
  const h = nylAsync(cwd, argv, { env });
  let stderr = '';
  h.child.stderr.on('data', (b) => (stderr += b));
  return { ...h, stderrSoFar: () => stderr };
}
