import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../test/harness.ts";
import { unsupportedNode } from "./supported-node.ts";

const PACKAGE = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as {
  engines: { node: string };
};

describe("the Node.js metalsynth runs on", () => {
  it.each(["22.12.0", "22.23.3", "24.0.0", "24.21.0"])("runs on %s", (version) => {
    expect(unsupportedNode(version)).toBeUndefined();
  });

  it.each(["20.20.2", "22.11.0", "23.6.0", "25.1.0", "18.20.8"])(
    "refuses %s in one line naming it",
    (version) => {
      const refusal = unsupportedNode(version) ?? "";
      expect(refusal).toContain(`this is Node.js ${version}`);
      expect(refusal).not.toContain("\n");
    },
  );

  it("is the range package.json's engines says, and .nvmrc names its first choice", () => {
    expect(PACKAGE.engines.node).toBe("^22.12.0 || ^24.0.0");
    expect(readFileSync(path.join(REPO, ".nvmrc"), "utf8").trim()).toBe("24");
  });

  // The machine's own Node.js, where it is an unsupported one (Debian's 20 here), runs the real bin.
  const system = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" });
  const systemVersion = system.status === 0 ? system.stdout.trim().slice(1) : undefined;
  it.runIf(systemVersion !== undefined && unsupportedNode(systemVersion) !== undefined)(
    "refuses an unsupported Node.js before loading anything: one line, exit 2",
    () => {
      const result = spawnSync("/usr/bin/node", [path.join(REPO, "bin", "metalsynth.js"), "--help"], {
        encoding: "utf8",
      });
      expect(result.status).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(`${unsupportedNode(systemVersion ?? "")}\n`);
    },
  );
});
