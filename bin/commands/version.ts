import { parseArgs } from "node:util";
import { EXIT, outputFormat, packageVersion, refuseStrayWords, type Console } from "../common.ts";

/** `metalsynth version`: the version of metalsynth, and of the Node.js running it with `-o json`. */
export async function version(argv: readonly string[], io: Console): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { format: { type: "string", short: "o" } },
    allowPositionals: true,
  });
  refuseStrayWords(positionals);
  const format = outputFormat(values.format);
  io.out(
    format === "json"
      ? `${JSON.stringify({ metalsynth: packageVersion(), node: process.versions.node })}\n`
      : `metalsynth ${packageVersion()}\n`,
  );
  return Promise.resolve(EXIT.ok);
}
