/**
 * Line diffs for `metalsynth diff --patch`: Myers' O((N+M)·D) algorithm in its linear-space form
 * (bisect at the middle of the edit path, recurse on both halves), and the unified format that
 * `patch -p1` and `git apply` read. Pure: text in, text out.
 */

/** One line of an edit script: kept (` `), only in the old text (`-`), only in the new text (`+`). */
export interface LineEdit {
  readonly op: " " | "-" | "+";
  /** The line with its terminator (`"\n"`), or without one for a last line that has none. */
  readonly line: string;
}

/**
 * A shortest edit script turning the lines of `before` into the lines of `after`. The kept lines are
 * a longest common subsequence; deletions come before insertions where both touch the same place.
 */
export function diffLines(before: string, after: string): LineEdit[] {
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  const ids = new Map<string, number>();
  const intern = (lines: readonly string[]): Int32Array =>
    Int32Array.from(lines, (line) => {
      let id = ids.get(line);
      if (id === undefined) {
        id = ids.size;
        ids.set(line, id);
      }
      return id;
    });
  const { keptOld, keptNew } = commonLines(intern(oldLines), intern(newLines));

  const edits: LineEdit[] = [];
  let i = 0;
  let j = 0;
  while (i < oldLines.length || j < newLines.length) {
    if (i < oldLines.length && keptOld[i] === 0) edits.push({ op: "-", line: oldLines[i++] ?? "" });
    else if (j < newLines.length && keptNew[j] === 0) edits.push({ op: "+", line: newLines[j++] ?? "" });
    else {
      // Kept lines pair up in order: the k-th kept old line matches the k-th kept new line.
      edits.push({ op: " ", line: oldLines[i] ?? "" });
      i += 1;
      j += 1;
    }
  }
  return edits;
}

/** Options of {@link unifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Name on the `---` line; `/dev/null` for a file that did not exist. */
  readonly oldLabel: string;
  /** Name on the `+++` line; `/dev/null` for a file that no longer exists. */
  readonly newLabel: string;
  /**
   * Unchanged lines shown around each change; changes closer than twice this share a hunk.
   * @default 3
   */
  readonly context?: number;
}

/**
 * A unified diff of two texts (`---`/`+++` header, `@@ -a,b +c,d @@` hunks), or `""` when they are
 * equal. A last line without a newline is marked `\ No newline at end of file`, as diff and git do,
 * so the patch reproduces the new text byte for byte.
 */
export function unifiedDiff(before: string, after: string, options: UnifiedDiffOptions): string {
  if (before === after) return "";
  const context = options.context ?? 3;
  const edits = diffLines(before, after);
  let out = `--- ${options.oldLabel}\n+++ ${options.newLabel}\n`;
  for (const hunk of hunks(edits, context)) {
    out += `@@ -${range(hunk.oldStart, hunk.oldCount)} +${range(hunk.newStart, hunk.newCount)} @@\n`;
    for (const edit of edits.slice(hunk.from, hunk.to)) {
      out += edit.op + edit.line;
      if (!edit.line.endsWith("\n")) out += "\n\\ No newline at end of file\n";
    }
  }
  return out;
}

/** Lines with their terminators, so "b" and "b\n" differ (a changed last-line ending is a change). */
function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines[lines.length - 1] === "" ? lines.slice(0, -1) : lines;
}

interface Hunk {
  /** Slice of the edit script. */
  readonly from: number;
  readonly to: number;
  /** 1-based first line, or the line before the hunk when the count is 0 (diff's convention). */
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
}

function hunks(edits: readonly LineEdit[], context: number): Hunk[] {
  const changes = edits.flatMap((edit, index) => (edit.op === " " ? [] : [index]));
  const result: Hunk[] = [];
  let start = 0;
  while (start < changes.length) {
    let end = start;
    // Extend while the gap of kept lines to the next change is small enough to share context.
    while (end + 1 < changes.length && (changes[end + 1] ?? 0) - (changes[end] ?? 0) - 1 <= 2 * context) {
      end += 1;
    }
    const from = Math.max(0, (changes[start] ?? 0) - context);
    const to = Math.min(edits.length, (changes[end] ?? 0) + context + 1);
    result.push(hunkAt(edits, from, to));
    start = end + 1;
  }
  return result;
}

function hunkAt(edits: readonly LineEdit[], from: number, to: number): Hunk {
  let oldBefore = 0;
  let newBefore = 0;
  for (const edit of edits.slice(0, from)) {
    if (edit.op !== "+") oldBefore += 1;
    if (edit.op !== "-") newBefore += 1;
  }
  let oldCount = 0;
  let newCount = 0;
  for (const edit of edits.slice(from, to)) {
    if (edit.op !== "+") oldCount += 1;
    if (edit.op !== "-") newCount += 1;
  }
  return {
    from,
    to,
    oldStart: oldCount === 0 ? oldBefore : oldBefore + 1,
    oldCount,
    newStart: newCount === 0 ? newBefore : newBefore + 1,
    newCount,
  };
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

/**
 * Marks the lines of a longest common subsequence of `a` and `b` (1 = kept). Common prefixes and
 * suffixes are taken first at every level; what remains differs at both ends, so its edit distance is
 * at least 2 and the bisection point splits it into two strictly smaller problems.
 */
function commonLines(a: Int32Array, b: Int32Array): { keptOld: Uint8Array; keptNew: Uint8Array } {
  const keptOld = new Uint8Array(a.length);
  const keptNew = new Uint8Array(b.length);
  const compare = (aLo: number, aHi: number, bLo: number, bHi: number): void => {
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
      keptOld[aLo++] = 1;
      keptNew[bLo++] = 1;
    }
    while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
      keptOld[--aHi] = 1;
      keptNew[--bHi] = 1;
    }
    if (aLo === aHi || bLo === bHi) return;
    const [x, y] = bisect(a, b, aLo, aHi, bLo, bHi);
    compare(aLo, aLo + x, bLo, bLo + y);
    compare(aLo + x, aHi, bLo + y, bHi);
  };
  compare(0, a.length, 0, b.length);
  return { keptOld, keptNew };
}

/**
 * Where a shortest edit path of `a[aLo..aHi)` → `b[bLo..bHi)` crosses its middle, relative to
 * (aLo, bLo): forward and backward searches advance one edit at a time until their furthest-reaching
 * paths overlap (Myers 1986, §4b). Diagonals that leave the grid are dropped from the search, so a
 * point outside it is never taken for an overlap.
 */
function bisect(
  a: Int32Array,
  b: Int32Array,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): [number, number] {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const maxD = Math.ceil((n + m) / 2);
  const offset = maxD + 1;
  const forward = new Int32Array(2 * offset + 1).fill(-1);
  const backward = new Int32Array(2 * offset + 1).fill(-1);
  forward[offset + 1] = 0;
  backward[offset + 1] = 0;
  const delta = n - m;
  // With an odd delta the paths can first meet on a forward step, with an even one on a backward step.
  const oddDelta = delta % 2 !== 0;
  let forwardStart = 0;
  let forwardEnd = 0;
  let backwardStart = 0;
  let backwardEnd = 0;
  const at = (array: Int32Array, k: number): number => array[offset + k] ?? -1;
  /**
   * Extends the furthest path on diagonal k by one edit (from the better neighbour diagonal) and then
   * along equal lines; `same(x, y)` compares in the search's own direction. Returns the end point.
   */
  const advance = (v: Int32Array, d: number, k: number, same: (x: number, y: number) => boolean) => {
    let x = k === -d || (k !== d && at(v, k - 1) < at(v, k + 1)) ? at(v, k + 1) : at(v, k - 1) + 1;
    let y = x - k;
    while (x < n && y < m && same(x, y)) {
      x += 1;
      y += 1;
    }
    v[offset + k] = x;
    return { x, y };
  };
  const forwardSame = (x: number, y: number) => a[aLo + x] === b[bLo + y];
  const backwardSame = (x: number, y: number) => a[aHi - 1 - x] === b[bHi - 1 - y];

  for (let d = 0; d <= maxD; d++) {
    for (let k = -d + forwardStart; k <= d - forwardEnd; k += 2) {
      const { x, y } = advance(forward, d, k, forwardSame);
      if (x > n) forwardEnd += 2;
      else if (y > m) forwardStart += 2;
      else if (oddDelta) {
        const reached = at(backward, delta - k);
        if (reached !== -1 && x >= n - reached) return [x, y];
      }
    }
    for (let k = -d + backwardStart; k <= d - backwardEnd; k += 2) {
      const { x, y } = advance(backward, d, k, backwardSame);
      if (x > n) backwardEnd += 2;
      else if (y > m) backwardStart += 2;
      else if (!oddDelta) {
        const forwardX = at(forward, delta - k);
        if (forwardX !== -1 && forwardX >= n - x) return [forwardX, forwardX - (delta - k)];
      }
    }
  }
  // Unreachable: the two searches always meet within ceil((n + m) / 2) steps.
  throw new Error("diffLines: the forward and backward searches never met");
}
