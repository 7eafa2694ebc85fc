import { cp, rm } from "node:fs/promises";
import path from "node:path";
import { main, type Console } from "../bin/cli.ts";
import { REPO } from "./harness.ts";

/** Runs the CLI in-process with captured output. */
export async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Console = { out: (text) => void (out += text), err: (text) => void (err += text) };
  const code = await main(argv, io);
  return { code, out, err };
}

/** Copies the example site's inputs to `target`, without its committed `rendered/`. */
export async function copyExampleSite(target: string): Promise<void> {
  await cp(path.join(REPO, "examples", "site"), target, { recursive: true });
  await rm(path.join(target, "rendered"), { recursive: true, force: true });
}
