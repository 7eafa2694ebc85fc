import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { RenderedPlace } from "../synth/site/path-prefix.ts";
import { errorCode } from "./files.ts";

/**
 * Where `out` (a `rendered/` directory, which need not exist yet) sits in the Git work tree that
 * holds it (decision 0055): `git rev-parse --show-prefix` in its nearest directory that exists, and
 * the rest of its path below that. Only that relative path is kept, never the clone's absolute one.
 * Asked with `execFile`, not simple-git, whose load would slow every command that reads a site
 * (decision 0018).
 */
export async function renderedPlace(out: string): Promise<RenderedPlace> {
  let existing = path.resolve(out);
  const below: string[] = [];
  while (!(await isDirectory(existing))) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    below.unshift(path.basename(existing));
    existing = parent;
  }
  let output: string;
  try {
    // --show-toplevel fails inside .git and in a bare repository, where --show-prefix prints "".
    output = await git(existing, ["rev-parse", "--show-toplevel", "--show-prefix"]);
  } catch (error) {
    if (errorCode(error) === "ENOENT")
      return { kind: "unknown", reason: `git is not on the PATH, so where ${out} is in Git is unknown` };
    const said = error instanceof GitFailure ? error.stderr : "";
    if (said === "" || /not a git repository/.test(said))
      return { kind: "unknown", reason: `${out} is not inside a Git work tree` };
    // Not a work tree (inside .git), or one git refuses to read (safe.directory): git says which.
    return { kind: "unknown", reason: `git cannot say where ${out} is in its work tree (${said})` };
  }
  const prefix = (output.split("\n")[1] ?? "").replace(/\/$/, "");
  return { kind: "work-tree", path: [prefix, ...below].filter((part) => part !== "").join("/") };
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await stat(dir).catch(() => undefined))?.isDirectory() ?? false;
}

/** A git command that exited non-zero, with the first line it wrote to stderr. */
class GitFailure extends Error {
  constructor(readonly stderr: string) {
    super(`git failed: ${stderr}`);
  }
}

function git(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("git", args, { cwd, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      if (errorCode(error) !== undefined) return reject(error);
      const line = stderr.trim().split("\n")[0] ?? "";
      reject(new GitFailure(line.replace(/^fatal: /, "")));
    });
  });
}
