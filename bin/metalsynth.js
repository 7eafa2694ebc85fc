#!/usr/bin/env node
// The package `bin`: registers tsx so the TypeScript sources run as they are (no build step for a
// clone), then hands over to the CLI.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./cli.ts");
process.exitCode = await main(process.argv.slice(2));
