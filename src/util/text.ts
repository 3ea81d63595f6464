/**
 * Texts Nyl shows in more than one place, such as a unit's failure reason: kept whole in
 * reports and state, cut to their first line where one line is all there is room for (a table
 * cell, a progress line on stderr).
 */

/**
 * A text of any number of lines, tidied without losing any of them: line ends as `\n`, no
 * trailing blanks on a line, no blanks or blank lines before the text or after it.
 */
export function tidyLines(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .trim();
}

/** The first line of a text (all of it when it has one). */
export function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

/** Does the text span more than one line? */
export function isMultiline(text: string): boolean {
  return text.includes('\n');
}
