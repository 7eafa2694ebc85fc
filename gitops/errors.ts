/**
 * A problem with how metalsynth was called (a missing path, a bad flag, an output directory it must
 * not replace): exit code 2, distinct from problems in the site's content (exit 1) and from bugs
 * (exit 3).
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /**
   * Whether the CLI adds "see 'metalsynth <command> --help'": yes for a wrong flag, no when the
   * message already says what to do about a file or a port.
   */
  readonly showHelp: boolean;

  constructor(message: string, options: { readonly showHelp?: boolean } = {}) {
    super(message);
    this.showHelp = options.showHelp ?? true;
  }
}
