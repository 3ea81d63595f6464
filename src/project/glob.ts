/**
 * Include globs of Project documents, matched against the slash-separated file paths of a
 * source tree. Supports `*` (any characters within one path segment), `?` (one character
 * within a segment), `**` as a whole segment (zero or more segments) and literal paths.
 * Every other character is literal. Written here so that loading needs no dependency.
 */

/** True when the pattern contains a wildcard; a pattern without one names one file. */
export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

/** Drops a leading `./`, which users write but tree paths never carry. */
export function normalizePattern(pattern: string): string {
  let p = pattern;
  while (p.startsWith('./')) p = p.slice(2);
  return p;
}

function globToRegExp(pattern: string): RegExp {
  const segments = normalizePattern(pattern).split('/');
  let source = '^';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') {
      // `a/**` matches everything below a; `a/**/b` also matches `a/b`.
      source += last ? '.+' : '(?:[^/]+/)*';
      return;
    }
    source += segmentSource(segment) + (last ? '' : '/');
  });
  return new RegExp(`${source}$`);
}

export function matchGlob(pattern: string, path: string): boolean {
  return globToRegExp(pattern).test(path);
}

/** The paths matching the pattern, sorted by code unit so that load order is deterministic. */
export function expandGlob(pattern: string, paths: readonly string[]): string[] {
  const re = globToRegExp(pattern);
  return paths.filter((p) => re.test(p)).sort();
}

function segmentSource(segment: string): string {
  let out = '';
  for (const ch of segment) {
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else out += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return out;
}
