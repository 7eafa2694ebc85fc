import { commitSite, type CommitOptions } from "../../gitops/commit.ts";
import { UsageError } from "../../gitops/errors.ts";
import { formatIssues } from "../../gitops/report/report.ts";
import { EXIT, interruptible, summary, type Command } from "../common.ts";

/** Upper bound of `--retries`: past a few dozen lost races, waiting longer will not help. */
const MAX_RETRIES = 50;

/**
 * `metalsynth commit`: synth, then commit `rendered/` with a per-cluster summary; with `--push`,
 * push and, after a lost race, re-render on top of the remote and try again. Exit 1 when the site has
 * errors, 4 when Git refused the commit or the push (the checkout is then as before), 2 when the
 * checkout is in a state commit refuses to work in (detached HEAD, hand edits in `rendered/`).
 */
export const commit: Command<"commit"> = async ({ values }, io) => {
  if (!values.push && (values.remote ?? values.branch ?? values.retries) !== undefined) {
    throw new UsageError("--remote, --branch and --retries only apply with --push");
  }
  const retries = values.retries === undefined ? undefined : Number(values.retries);
  if (retries !== undefined && !(/^\d+$/.test(values.retries ?? "") && retries <= MAX_RETRIES)) {
    throw new UsageError(
      `--retries must be a whole number from 0 to ${MAX_RETRIES}, not "${values.retries}"`,
    );
  }
  // A subject is one line; an author part also ends up between git's own "Name <email>" brackets.
  for (const [flag, value, forbidden] of [
    ["--message", values.message, /\n/],
    ["--author-name", values["author-name"], /[<>\n]/],
    ["--author-email", values["author-email"], /[<>\n\s]/],
  ] as const) {
    if (value !== undefined && (value.trim() === "" || forbidden.test(value))) {
      throw new UsageError(
        `${flag} must be one non-empty line${flag === "--message" ? "" : " without < or >"}`,
      );
    }
  }

  const options: CommitOptions = {
    ...(values.site === undefined ? {} : { site: values.site }),
    ...(values.message === undefined ? {} : { subject: values.message }),
    author: {
      ...(values["author-name"] === undefined ? {} : { name: values["author-name"] }),
      ...(values["author-email"] === undefined ? {} : { email: values["author-email"] }),
    },
    ...(values.push
      ? {
          push: {
            ...(values.remote === undefined ? {} : { remote: values.remote }),
            ...(values.branch === undefined ? {} : { branch: values.branch }),
            ...(retries === undefined ? {} : { retries }),
          },
        }
      : {}),
    log: (line) => io.err(`metalsynth: ${line}\n`),
    interruptible,
  };
  const outcome = await commitSite(options);
  switch (outcome.kind) {
    case "refused":
      io.err(`metalsynth: refusing to commit: ${outcome.reason}\n`);
      return EXIT.usage;
    case "failed":
      io.err(`metalsynth: ${outcome.reason}\n`);
      return EXIT.git;
    case "invalid":
      io.out(formatIssues(outcome.issues, "text"));
      io.err(
        `${summary(outcome.issues)}; nothing committed${values.push ? ", nothing pushed" : ""}` +
          `${outcome.afterFetch ? " (the errors came with the remote's changes)" : ""}\n`,
      );
      return EXIT.invalid;
    case "done": {
      if (outcome.issues.length > 0) io.err(formatIssues(outcome.issues, "text"));
      if (outcome.commit === undefined || outcome.message === undefined) {
        io.out(`nothing to commit: rendered/ is up to date on ${outcome.branch}\n`);
      } else {
        if (outcome.message.body !== "") io.out(`${outcome.message.body}\n`);
        io.out(`committed ${outcome.commit.slice(0, 12)} on ${outcome.branch}: ${outcome.message.subject}\n`);
      }
      if (outcome.pushed) {
        const { remote, branch, retries: used } = outcome.pushed;
        io.out(
          `pushed to ${remote} ${branch}${used === 0 ? "" : ` after ${used} ${used === 1 ? "retry" : "retries"}`}\n`,
        );
      }
      return EXIT.ok;
    }
  }
};
