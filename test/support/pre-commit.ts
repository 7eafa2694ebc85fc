import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

/** Where the tests' pre-commit lives: a virtual environment of its own, as .ci/run makes it. */
export const PRE_COMMIT_VENV = path.join(homedir(), ".cache", "metalsynth-precommit");

/**
 * The real `pre-commit` from PyPI, installed with pip (and this machine's pip configuration) into
 * {@link PRE_COMMIT_VENV} the first time; its path.
 */
export function preCommit(): string {
  const bin = path.join(PRE_COMMIT_VENV, "bin", "pre-commit");
  if (!existsSync(bin)) {
    execFileSync("python3", ["-m", "venv", PRE_COMMIT_VENV], { stdio: "inherit" });
    execFileSync(path.join(PRE_COMMIT_VENV, "bin", "pip"), ["install", "--quiet", "pre-commit"], {
      stdio: "inherit",
    });
  }
  return bin;
}
