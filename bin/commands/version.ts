import { EXIT, packageVersion, type Command } from "../common.ts";

/** `metalsynth version`: the version of metalsynth, and of the Node.js running it with `-o json`. */
export const version: Command<"version"> = ({ values }, io) => {
  io.out(
    values.format === "json"
      ? `${JSON.stringify({ metalsynth: packageVersion(), node: process.versions.node })}\n`
      : `metalsynth ${packageVersion()}\n`,
  );
  return Promise.resolve(EXIT.ok);
};
