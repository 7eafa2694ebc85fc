import { main, type Console } from "../bin/cli.ts";

/** Runs the CLI in-process with captured output. */
export async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Console = { out: (text) => void (out += text), err: (text) => void (err += text) };
  const code = await main(argv, io);
  return { code, out, err };
}
