import { UsageError } from "../../gitops/errors.ts";
import { completionScript, SHELLS, type Shell } from "../completion.ts";
import { EXIT, type Command } from "../common.ts";

/** `metalsynth completion bash|zsh|fish`: prints the completion script for that shell. */
export const completion: Command<"completion"> = ({ operands }, io) => {
  const [shell, ...rest] = operands;
  if (shell === undefined || !(SHELLS as readonly string[]).includes(shell) || rest.length > 0)
    throw new UsageError(`completion takes one shell: ${SHELLS.join(", ")}`);
  io.out(completionScript(shell as Shell));
  return Promise.resolve(EXIT.ok);
};
