import { UsageError } from "../../gitops/errors.ts";
import { completionScript, SHELLS, type Shell } from "../completion.ts";
import { EXIT, type Console } from "../common.ts";

/** `metalsynth completion bash|zsh|fish`: prints the completion script for that shell. */
export async function completion(argv: readonly string[], io: Console): Promise<number> {
  const [shell, ...rest] = argv;
  if (shell === undefined || !(SHELLS as readonly string[]).includes(shell) || rest.length > 0)
    throw new UsageError(`completion takes one shell: ${SHELLS.join(", ")}`);
  io.out(completionScript(shell as Shell));
  return Promise.resolve(EXIT.ok);
}
