/**
 * 10,000 random and mutated AdmissionReview bodies against the real server over TLS: every answer is
 * a well-formed response (an AdmissionReview, or a JSON error with a 4xx status), the server never
 * crashes, and its heap does not grow with the number of requests.
 */
import { Agent } from "node:https";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WARNING_LENGTH } from "../../webhook/admission.ts";
import { mulberry32 } from "../builders/inventory.ts";
import { send, type Target } from "./client.ts";
import { startTestWebhook, type TestWebhook } from "./harness.ts";
import { admissionReview, provisioning, sipCluster, type Cr } from "../builders/reviews.ts";

const BODIES = 10_000;
const BATCH = 500;
const CONCURRENCY = 8;

/** What every 200 answer must look like. */
const AnswerSchema = z.strictObject({
  apiVersion: z.literal("admission.k8s.io/v1"),
  kind: z.literal("AdmissionReview"),
  response: z
    .strictObject({
      uid: z.string().min(1),
      allowed: z.boolean(),
      status: z
        .strictObject({ code: z.int(), reason: z.string().min(1), message: z.string().min(1) })
        .optional(),
      warnings: z.array(z.string().min(1).max(MAX_WARNING_LENGTH)).min(1).optional(),
    })
    .refine((response) => response.allowed === (response.status === undefined), "status iff denied"),
});
const ErrorSchema = z.strictObject({ error: z.string().min(1) });

/** Valid reviews of every kind, allowed and denied, for mutation. */
const SEEDS: readonly Cr[] = [
  provisioning({
    name: "seed-good",
    masters: [["master-1", { "mac-address": "3c:fd:fe:ca:f9:a0", cpu: 8, memory: "16Gi" }]],
    workers: [
      ["worker-1", { cpu: 16, memory: "64Gi", sriov: true }],
      ["master-1", null],
    ],
  }),
  provisioning({
    name: "seed-bad",
    masters: [["master-1", { "mac-address": "b8:ce:f6:79:e4:c0", cpu: 512 }]],
  }),
  sipCluster({ name: "seed-sip", workers: 1 }),
  {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Software",
    metadata: { name: "seed-sw", namespace: "edge-a", labels: { cluster: "cluster-east" } },
    spec: { masterSoftware: ["htop", { jq: { version: "1.6-2.1ubuntu3" } }], workerSoftware: ["curl"] },
  },
  {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Cluster",
    metadata: { name: "seed-cluster", namespace: "edge-a", labels: { cluster: "cluster-east" } },
    spec: { provisioningCR: "cluster-east", softwareCR: "cluster-east-software" },
  },
];

/** Odd values to plant: wrong types, prototype keys, control characters, long and huge strings. */
const ODD_VALUES: readonly unknown[] = [
  null,
  true,
  -1,
  1e308,
  0.5,
  "",
  "\u0000\u0007\u001b[31m",
  "ﬀ🚀\uD800",
  "x".repeat(300),
  "y".repeat(100_000),
  [],
  {},
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {}}}'),
  Array.from({ length: 2000 }, (_, index) => ({ [`node-${index}`]: { cpu: index } })),
];

type Random = () => number;

function pick<T>(random: Random, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)] as T;
}

/** Every path to a value inside `value` (objects and arrays), down to a depth planted values exceed. */
function paths(value: unknown, prefix: (string | number)[] = [], found: (string | number)[][] = []) {
  found.push(prefix);
  if (prefix.length >= 12) return found;
  if (Array.isArray(value)) value.forEach((item, index) => paths(item, [...prefix, index], found));
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) paths(item, [...prefix, key], found);
  }
  return found;
}

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

/** A copy of `review` with a few random changes: deletions, replacements, renamed keys, deep nesting. */
function mutate(review: Record<string, unknown>, random: Random, pool: readonly unknown[]): unknown {
  const copy: unknown = structuredClone(review);
  const changes = 1 + Math.floor(random() * 4);
  for (let change = 0; change < changes; change++) {
    const target = pick(random, paths(copy));
    if (target.length === 0) continue;
    const parent = target.slice(0, -1).reduce<unknown>((node, key) => Reflect.get(node as object, key), copy);
    const key = target[target.length - 1] as string | number;
    if (typeof parent !== "object" || parent === null) continue;
    const operation = random();
    if (operation < 0.25) Reflect.deleteProperty(parent, key);
    // Copies, so that a later change inside a planted value can't reach a shared one.
    else if (operation < 0.55) Reflect.set(parent, key, structuredClone(pick(random, pool)));
    else if (operation < 0.8) Reflect.set(parent, key, structuredClone(pick(random, ODD_VALUES)));
    else if (operation < 0.9) Reflect.set(parent, `${String(key)}x`, Reflect.get(parent, key));
    else Reflect.set(parent, key, nested(1 + Math.floor(random() * 300)));
  }
  return copy;
}

/** Body number `index`: mutated reviews mostly, then random JSON, truncated JSON and raw bytes. */
function body(
  index: number,
  random: Random,
  pool: readonly unknown[],
  bytes: readonly Uint8Array[],
): string | Buffer {
  const seed = SEEDS[index % SEEDS.length] as Cr;
  const review = admissionReview(seed, {
    uid: `fuzz-${index}`,
    operation: pick(random, ["CREATE", "CREATE", "UPDATE", "DELETE"] as const),
    dryRun: random() < 0.5,
  });
  const kind = random();
  if (kind < 0.05) {
    // Nesting far deeper than any recursive walk survives, planted in the object as text.
    const depth = 1000 + Math.floor(random() * 20_000);
    return JSON.stringify(review).replace(
      '"spec":',
      `"deep":${"[".repeat(depth)}${"]".repeat(depth)},"spec":`,
    );
  }
  if (kind < 0.6) return JSON.stringify(mutate(review, random, pool));
  if (kind < 0.75) return JSON.stringify(pick(random, pool));
  if (kind < 0.9) {
    const text = JSON.stringify(review);
    return text.slice(0, Math.floor(random() * text.length));
  }
  return Buffer.from(pick(random, bytes));
}

/** The uid the body carries, when it carries one a server could echo. */
function uidOf(text: string | Buffer): string | undefined {
  try {
    const value: unknown = JSON.parse(String(text));
    const uid = (value as { request?: { uid?: unknown } } | null)?.request?.uid;
    return typeof uid === "string" ? uid : undefined;
  } catch {
    return undefined;
  }
}

/** The heap after a full collection (V8's gc, reached without --expose-gc on the command line). */
function heapAfterGc(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

describe("the webhook under 10,000 random and mutated bodies", () => {
  let webhook: TestWebhook;
  let target: Target;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  beforeAll(async () => {
    webhook = await startTestWebhook();
    target = { ...webhook.target, agent };
  });
  afterAll(async () => {
    agent.destroy();
    await webhook.running.shutdown();
  });

  it("answers every one well-formed, survives, and keeps its heap flat", async () => {
    const random = mulberry32(20261121);
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    let baseline = 0;
    for (let start = 0; start < BODIES; start += BATCH) {
      const pool = fc.sample(fc.jsonValue({ maxDepth: 4 }), { numRuns: 200, seed: start });
      const bytes = fc.sample(fc.uint8Array({ maxLength: 512 }), { numRuns: 50, seed: start });
      const bodies = Array.from({ length: BATCH }, (_, offset) => body(start + offset, random, pool, bytes));
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < bodies.length) {
            const index = start + next;
            const sent = bodies[next++] as string | Buffer;
            const path = `/validate/${(SEEDS[index % SEEDS.length] as Cr).kind.toLowerCase()}`;
            const reply = await send(target, "POST", path, sent);
            statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
            const json: unknown = JSON.parse(reply.text);
            if (reply.status === 200) {
              const answer = AnswerSchema.safeParse(json);
              if (!answer.success) problems.push(`${reply.text.slice(0, 200)}: ${answer.error.message}`);
              else if (answer.data.response.uid !== uidOf(sent))
                problems.push(`uid not echoed: ${reply.text}`);
            } else if (![400, 413, 415].includes(reply.status) || !ErrorSchema.safeParse(json).success) {
              problems.push(`${reply.status} ${reply.text.slice(0, 200)}`);
            }
          }
        }),
      );
      // The first batch warms caches and JIT code; growth is measured from there.
      if (start === 0) baseline = heapAfterGc();
    }
    const growth = heapAfterGc() - baseline;

    expect(problems).toEqual([]);
    expect([...statuses.values()].reduce((sum, count) => sum + count, 0)).toBe(BODIES);
    // Both kinds of answer occur: the fuzz reaches the rules, not just the parser.
    expect(statuses.get(200)).toBeGreaterThan(BODIES / 4);
    expect(statuses.get(400)).toBeGreaterThan(BODIES / 10);
    expect(growth).toBeLessThan(64 * 1024 * 1024);
    const health = await send(target, "GET", "/healthz");
    expect(health.status).toBe(200);
  }, 120_000);
});
