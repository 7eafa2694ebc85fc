#!/usr/bin/env node
// The package `bin`: runs the CLI compiled into dist/ (`npm run build`, which `npm ci` runs through
// the `prepare` script) with plain node, so start-up pays for no TypeScript compiler (decision 0018).
// An unsupported Node.js is refused in one line, exit 2, before the CLI is loaded: loading it there
// could fail anywhere, or half work.
import { unsupportedNode } from "../dist/bin/supported-node.js";

const refusal = unsupportedNode(process.versions.node);
if (refusal === undefined) {
  const { main } = await import("../dist/bin/cli.js");
  process.exitCode = await main(process.argv.slice(2));
} else {
  process.stderr.write(`${refusal}\n`);
  process.exitCode = 2;
}
