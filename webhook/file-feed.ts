/**
 * Keeps the webhook's knowledge in step with files: the inventory snapshot (`--inventory`) and the
 * site's specs and lock (`--site`). Files are re-read when they change. A read that finds a file it
 * can't parse (mid-write, truncated, corrupted) is not applied: the previous snapshot stays in
 * service and `/readyz` and the log say why (docs/decisions/0011-webhook-admission-scope.md).
 */
import type { SourceDocument } from "../synth/documents.ts";
import { issueText, type Issue } from "../synth/issue.ts";
import type { RuleId } from "../synth/rule-catalogue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import type { Lock } from "../synth/model/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import { watchPaths, type PathWatch, type WatchOptions } from "./file-watch.ts";
import type { Logger } from "./log.ts";
import type { Feed, Readiness, WebhookState } from "./state.ts";

/** What one read of the files gives (the CLI reads them with gitops' readers). */
export interface SiteFiles {
  /** The inventory; absent when the API server supplies it (`--from-cluster`). */
  readonly inventory?: Inventory;
  /** The documents of the site's specs. */
  readonly documents: readonly SourceDocument[];
  /** The site's lock; absent when the API server supplies it (`--from-cluster`: the Allocations). */
  readonly lock?: Lock;
  /** Everything found wrong while reading. */
  readonly issues: readonly Issue[];
}

/** Options of {@link FileFeed.start}. */
export interface FileFeedOptions extends WatchOptions {
  /** Files and directories whose changes trigger a re-read. */
  readonly paths: readonly string[];
  /** Reads the files. */
  readonly load: () => Promise<SiteFiles>;
  readonly state: WebhookState;
  readonly log: Logger;
  /**
   * Wall clock in milliseconds.
   * @default Date.now
   */
  readonly clock?: () => number;
}

/**
 * Findings that mean a file could not be read at all, rather than that its content is wrong. A
 * damaged lock counts: reviewing without it would let a request take hosts the site has given out.
 */
const UNREADABLE: ReadonlySet<RuleId> = new Set(["yaml-syntax", "too-large", "file-unread", "lock-invalid"]);
/** Content findings logged per load; the rest are counted. */
const LOGGED_ISSUES = 20;

/** A feed of knowledge from files. */
export class FileFeed implements Feed {
  readonly #options: FileFeedOptions;
  readonly #clock: () => number;
  #watch: PathWatch | undefined;
  #loaded: { readonly at: number; readonly hosts?: number; readonly objects: number } | undefined;
  #problem: string | undefined;

  private constructor(options: FileFeedOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Registers the feed with the state, reads the files once and watches them from then on. */
  static async start(options: FileFeedOptions): Promise<FileFeed> {
    const feed = new FileFeed(options);
    options.state.addFeed(feed);
    // Watch first: a change while the first read runs then leads to a second read.
    feed.#watch = watchPaths(options.paths, () => feed.#reload(), options);
    await feed.#reload();
    return feed;
  }

  status(): Readiness {
    if (this.#loaded === undefined) {
      return { ready: false, detail: `files: not loaded (${this.#problem ?? "loading"})` };
    }
    const { at, hosts, objects } = this.#loaded;
    const age = Math.round((this.#clock() - at) / 1000);
    const what = `${hosts === undefined ? "" : `${hosts} hosts, `}${objects} known objects`;
    const stale =
      this.#problem === undefined
        ? ""
        : `; the last re-read failed (${this.#problem}), so the files read before it are served`;
    return { ready: true, detail: `files: ${what}, read ${age}s ago${stale}` };
  }

  async close(): Promise<void> {
    this.#watch?.close();
  }

  async #reload(): Promise<void> {
    const { log, state } = this.#options;
    let files: SiteFiles;
    try {
      files = await this.#options.load();
    } catch (error) {
      this.#fail(error instanceof Error ? error.message : String(error));
      return;
    }
    const unreadable = files.issues.filter((found) => UNREADABLE.has(found.rule));
    if (unreadable.length > 0) {
      this.#fail(unreadable.map(issueText).join("; "));
      return;
    }
    const { resources, invalid, issues: specIssues } = readResources(files.documents);
    state.update({
      ...(files.inventory && { inventory: files.inventory }),
      siteResources: resources,
      siteInvalid: invalid,
      ...(files.lock && { lock: files.lock }),
    });
    this.#loaded = {
      at: this.#clock(),
      ...(files.inventory && { hosts: files.inventory.size }),
      objects: resources.length,
    };
    this.#problem = undefined;
    const issues = [...files.issues, ...specIssues];
    log.info("files read", {
      hosts: files.inventory?.size,
      objects: resources.length,
      issues: issues.length,
    });
    // Objects with such findings are left out of what the webhook knows; say which.
    for (const found of issues.slice(0, LOGGED_ISSUES))
      log.warn("file finding", { finding: issueText(found) });
    if (issues.length > LOGGED_ISSUES)
      log.warn("more file findings", { count: issues.length - LOGGED_ISSUES });
  }

  #fail(problem: string): void {
    this.#problem = problem;
    this.#options.log.error(
      this.#loaded === undefined ? "files not read" : "files not re-read; serving the previous read",
      { problem },
    );
  }
}
