/**
 * docs/contract.md §4: `synth` is idempotent. Starting from the example site and its committed `rendered/`, a
 * random sequence of site changes (SIP role counts up and down, clusters leaving and coming back, a
 * GitOps agent applying the label patches and a new snapshot showing it, a host labelled for a
 * SIPCluster the site never managed) is rendered step by step; after every step a second synth
 * writes nothing and `diff --exit-code` passes, releases included (decision 0034).
 */
import { cp, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { readTree } from "../gitops/replace-dir.ts";
import { REPO } from "./harness.ts";
import { run } from "./run-cli.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
/** The inventory file whose hosts a step may relabel (each has a `labels:` block before its name). */
const RACK = path.join("inventory", "rack-r01.yaml");
const SIP_FILE = path.join("specs", "tenant-a", "sipcluster.yaml");
const SIP_PREFIX = "sip.airshipit.org/";

type Step =
  | {
      readonly kind: "counts";
      readonly controlPlane: readonly [number, number];
      readonly worker: readonly [number, number];
    }
  | { readonly kind: "toggle"; readonly cluster: "cluster-west" | "tenant-a" }
  | { readonly kind: "sync" }
  | { readonly kind: "foreign"; readonly host: number };

const count = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1 }));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("counts" as const), controlPlane: count, worker: count }),
  fc.record({
    kind: fc.constant("toggle" as const),
    cluster: fc.constantFrom("cluster-west" as const, "tenant-a" as const),
  }),
  fc.constant({ kind: "sync" as const }),
  fc.record({ kind: fc.constant("foreign" as const), host: fc.integer({ min: 1, max: 8 }) }),
);

/** Applies one change to the site in `dir`. */
async function apply(dir: string, change: Step): Promise<void> {
  switch (change.kind) {
    case "counts": {
      const file = path.join(dir, SIP_FILE);
      if (!existsSync(file)) return;
      const lines = (await readFile(file, "utf8")).split("\n");
      // The role blocks list `active:` then `standby:`, ControlPlane first.
      const values = [...change.controlPlane, ...change.worker];
      let at = 0;
      const rewritten = lines.map((line) => {
        const match = /^(\s+)(active|standby): \d+/.exec(line);
        const value = values[at];
        if (!match || value === undefined) return line;
        at++;
        return `${match[1]}${match[2]}: ${value}`;
      });
      await writeFile(file, rewritten.join("\n"));
      return;
    }
    case "toggle": {
      const live = path.join(dir, "specs", change.cluster);
      const away = path.join(dir, `away-${change.cluster}`);
      if (existsSync(live)) await rename(live, away);
      else await rename(away, live);
      return;
    }
    case "sync": {
      // The agent applied rendered/: hosts carry the SIP labels the lock gives them, released ones none.
      const lock: unknown = parse(await readFile(path.join(dir, "rendered", "metalsynth.lock.yaml"), "utf8"));
      const hosts: { host: string; cluster: string; kind: string; role: string; released?: boolean }[] =
        Reflect.get(Object(lock), "hosts") ?? [];
      const labels = new Map<string, string[]>();
      for (const entry of hosts) {
        if (entry.kind !== "sip" || entry.released === true) continue;
        const [namespace, name] = entry.cluster.split("/");
        labels.set(entry.host.replace("metal3/", ""), [
          `cluster-namespace: ${namespace}`,
          `cluster-name: ${name}`,
          `node-type: ${entry.role}`,
        ]);
      }
      await relabel(dir, (host) => labels.get(host));
      return;
    }
    case "foreign": {
      const target = `r01-node-0${change.host}`;
      await relabel(dir, (host, current) =>
        host === target
          ? ["cluster-namespace: other", "cluster-name: tenant-z", "node-type: Worker"]
          : current,
      );
      return;
    }
  }
}

/** Rewrites the SIP labels of the hosts in {@link RACK}: `labels(host, current)` gives the new ones. */
async function relabel(
  dir: string,
  labels: (host: string, current: string[] | undefined) => string[] | undefined,
): Promise<void> {
  const file = path.join(dir, RACK);
  const lines = (await readFile(file, "utf8")).split("\n");
  const out: string[] = [];
  let current: string[] = [];
  for (const line of lines) {
    const sip = /^ {6}sip\.airshipit\.org\/(.*)$/.exec(line);
    if (sip?.[1] !== undefined) {
      current.push(sip[1]);
      continue;
    }
    const name = /^ {4}name: (r01-node-\d+)$/.exec(line);
    if (name?.[1] !== undefined) {
      for (const label of labels(name[1], current.length > 0 ? current : undefined) ?? [])
        out.push(`      ${SIP_PREFIX}${label}`);
      current = [];
    }
    out.push(line);
  }
  await writeFile(file, out.join("\n"));
}

describe("synth is idempotent over random site changes", () => {
  it("writes nothing the second time, and diff --exit-code passes, after every step", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 3 }), async (steps) => {
        const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-idempotent-"));
        try {
          await cp(EXAMPLE, dir, { recursive: true });
          for (const change of steps) {
            await apply(dir, change);
            const first = await run("synth", "--site", dir);
            if (first.code !== 0) {
              // A refused site writes nothing; the step is still part of the history that follows.
              expect(first.code, first.out).toBe(1);
              continue;
            }
            const written = await readTree(path.join(dir, "rendered"));
            const second = await run("synth", "--site", dir);
            expect(second.code).toBe(0);
            expect(`${second.out}${second.err}`).toMatch(/0 added, 0 changed, 0 removed/);
            expect(await readTree(path.join(dir, "rendered"))).toEqual(written);
            const diff = await run("diff", "--site", dir, "--exit-code");
            expect(diff.code, diff.out).toBe(0);
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 24 },
    );
  }, 300_000);
});
