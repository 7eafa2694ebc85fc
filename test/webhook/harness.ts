/**
 * Starts the real webhook server (main.ts) on 127.0.0.1 with a test CA, fed from a private copy of
 * the example site, so tests can change files under it.
 */
import path from "node:path";
import { inventoryFiles, siteFiles, sitePaths } from "../../bin/commands/webhook.ts";
import { FileFeed } from "../../webhook/file-feed.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { startWebhook, type RunningWebhook } from "../../webhook/main.ts";
import { WebhookState, type Knowledge } from "../../webhook/state.ts";
import { copyExampleSite } from "../support/example-site.ts";
import type { Target } from "./client.ts";
import { createTestCa, issueServerCertificate, type ServerCertificate, type TestCa } from "./tls-fixture.ts";

/** Fast file watching, so reload tests don't wait for the production 5 s poll. */
export const FAST_WATCH = { pollMs: 100, debounceMs: 20 } as const;

/** A running test webhook. */
export interface TestWebhook {
  readonly target: Target;
  readonly ca: TestCa;
  /** The files the server reads its certificate from (rotate them to test reloads). */
  readonly certificate: ServerCertificate;
  /** The copy of the example site the server reads. */
  readonly site: string;
  readonly state: WebhookState;
  readonly running: RunningWebhook;
  /** Parsed log lines so far. */
  logs(): Record<string, unknown>[];
}

/** Options of {@link startTestWebhook}. */
export interface TestWebhookOptions {
  /** Read the site's specs and lock too (else only its inventory). @default true */
  readonly withSite?: boolean;
  /** Wraps what requests see, e.g. to make the rules throw. */
  readonly knowledge?: (state: WebhookState) => Knowledge;
}

/** Starts a webhook over a fresh copy of the example site. */
export async function startTestWebhook(options: TestWebhookOptions = {}): Promise<TestWebhook> {
  const site = await copyExampleSite();
  const ca = await createTestCa();
  const certificate = await issueServerCertificate(ca, "server");
  const lines: string[] = [];
  const log = jsonLogger((line) => lines.push(line));
  const state = new WebhookState();
  const inventory = [path.join(site, "inventory")];
  const withSite = options.withSite ?? true;
  await FileFeed.start({
    paths: [...inventory, ...(withSite ? sitePaths(site) : [])],
    load: () => (withSite ? siteFiles(site, inventory) : inventoryFiles(inventory)),
    state,
    log,
    ...FAST_WATCH,
  });
  const knowledge = options.knowledge?.(state) ?? state;
  const running = await startWebhook({
    host: "127.0.0.1",
    port: 0,
    tls: certificate,
    state: {
      reviewer: () => knowledge.reviewer(),
      allocationReviewer: () => knowledge.allocationReviewer(),
      hold: (object, at) => knowledge.hold(object, at),
      holdCount: () => knowledge.holdCount(),
      holdsAdmitted: knowledge.holdsAdmitted,
      unchanged: (object) => knowledge.unchanged(object),
      readiness: () => knowledge.readiness(),
      staleness: () => knowledge.staleness(),
      inventoryStats: () => knowledge.inventoryStats(),
      startDraining: () => state.startDraining(),
      close: () => state.close(),
    },
    log,
    drainDelayMs: 0,
    tlsWatch: FAST_WATCH,
  });
  return {
    target: { port: running.port, ca: ca.cert },
    ca,
    certificate,
    site,
    state,
    running,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Polls `condition` every 25 ms until it holds; fails after `timeoutMs`. */
export async function eventually<T>(
  condition: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
