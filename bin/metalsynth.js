#!/usr/bin/env node
// The package `bin`: runs the CLI compiled into dist/ (`npm run build`, which `npm ci` runs through
// the `prepare` script) with plain node, so start-up pays for no TypeScript compiler (decision 0018).
import { main } from "../dist/bin/cli.js";

process.exitCode = await main(process.argv.slice(2));
