/**
 * A problem with how metalsynth was called (a missing path, a bad flag): exit code 2, distinct from
 * problems in the site's content (exit 1) and from bugs (exit 3).
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
