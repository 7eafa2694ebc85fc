/**
 * The site map in a real browser: headless Chromium (Debian's package, driven by playwright-core)
 * opens the maps of the example site, the broken site and a hub-scale fleet. The DOM is checked
 * (one tile per host, the legend, the search box, the keyboard), and the example and broken maps
 * are compared with reviewed screenshots (`UPDATE_SCREENSHOTS=1` replaces them; docs/map-example.png
 * is also the README's picture, so it cannot go stale).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateHubSite, type HubSite } from "../../bench/hub-site.ts";
import { parseDocuments } from "../../synth/codec/read-documents.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import type { Issue } from "../../synth/issue.ts";
import { mapHtml } from "../../synth/map/map-html.ts";
import { siteMap } from "../../synth/map/site-map.ts";
import { EMPTY_LOCK } from "../../synth/rules/lock.ts";
import { makeInventory } from "../builders/inventory.ts";
import { REPO } from "../harness.ts";
import { run } from "../run-cli.ts";
import { startChromium, type Chromium } from "./chromium.ts";
import { expectScreenshot } from "./screenshots.ts";

const REFERENCES = path.join(REPO, "test", "map", "references");

let browser: Chromium;
let scratch: string;

beforeAll(async () => {
  browser = await startChromium();
  scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-map-browser-"));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

/** Writes the map of `site` with the CLI and opens it. */
async function openMap(site: string, ...options: string[]): Promise<Page> {
  const file = path.join(scratch, `${path.basename(site)}-${options.length}.html`);
  const result = await run("map", "--site", site, "--out", file, ...options);
  expect(result.out).toMatch(/^wrote /);
  const page = await browser.context.newPage();
  await page.goto(pathToFileURL(file).href);
  return page;
}

/** The first line of each tooltip matching `selector` (a tile's host id). */
async function hostsOf(page: Page, selector: string): Promise<string[]> {
  const titles = await page.locator(`${selector} > title`).allTextContents();
  return titles.map((title) => title.split("\n")[0] ?? "");
}

/**
 * What the page shows: tiles, those the search leaves, open groups, the search's words. Through
 * locators, not DOM code: the project's TypeScript has no DOM library.
 */
async function state(page: Page) {
  return {
    tiles: await page.locator("g.t[data-s]").count(),
    shown: await hostsOf(page, "g.t[data-s]:not(.miss)"),
    open: await page.locator("details.group[open]:not([hidden]) .gname").allTextContents(),
    status: await page.locator("#search-status").textContent(),
    legend: await page.locator(".legend li").allTextContents(),
  };
}

const LEGEND = [
  "control plane (BPA master, SIP ControlPlane): solid band",
  "worker (BPA worker, SIP Worker): striped band",
  "standby: hatched",
  "being released: dashed outline",
  "free: grey, no band",
  "finding: red border and ! (rule ids in the tooltip)",
];
const COLOUR_NOTE = "tile colour: the cluster holding the host (its name is on the tile)";

describe("the site map in Chromium", () => {
  it("shows the example site: one tile per host, the legend, as reviewed", async () => {
    const page = await openMap(path.join(REPO, "examples", "site"));
    const shown = await state(page);
    expect(shown.tiles).toBe(24);
    expect(new Set(shown.shown).size).toBe(24);
    expect(shown.open).toEqual(["r01", "r02", "r03"]);
    expect(shown.legend).toEqual([...LEGEND, COLOUR_NOTE]);
    await expectScreenshot(
      await page.screenshot({ fullPage: true }),
      path.join(REPO, "docs", "map-example.png"),
    );
    await page.close();
  });

  it("searches by host, cluster and MAC from the keyboard, and restores the page when cleared", async () => {
    const page = await openMap(path.join(REPO, "examples", "site"));
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.id")).toBe("search");
    await page.keyboard.type("cluster-west");
    let shown = await state(page);
    expect(shown.status).toBe("5 of 24 hosts match");
    expect(shown.shown).toEqual([
      "metal3/r01-node-05",
      "metal3/r01-node-06",
      "metal3/r02-node-06",
      "metal3/r02-node-07",
      "metal3/r03-node-05",
    ]);
    await page.fill("#search", "3C:FD:FE:13:F8:B8"); // master-1 of cluster-east, as an asset sheet prints it
    shown = await state(page);
    expect(shown.shown).toEqual(["metal3/r01-node-04"]);
    expect(shown.open).toEqual(["r01"]);
    await page.fill("#search", "");
    shown = await state(page);
    expect([shown.status, shown.shown.length, shown.open]).toEqual(["", 24, ["r01", "r02", "r03"]]);
    // The next stop after the search box is the first group, which the keyboard folds.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    expect((await state(page)).open).toEqual(["r02", "r03"]);
    await page.close();
  });

  it("shows the broken site with its findings marked, as reviewed", async () => {
    const page = await openMap(path.join(REPO, "examples", "broken"));
    const titles = await page.locator("g.t.bad > title").allTextContents();
    const marked = titles.map((title) => {
      const lines = title.split("\n");
      return [
        lines[0],
        lines.filter((line) => /^(error|warning)\[/.test(line)).map((line) => line.split("]")[0]),
      ];
    });
    expect(marked).toEqual([
      ["metal3/r01-node-08", ["error[mac-duplicate"]],
      ["metal3/r02-node-03", ["error[host-claimed"]],
      ["metal3/r02-node-06", ["error[cpu-insufficient", "error[memory-insufficient"]],
      ["metal3/r03-node-03", ["error[sriov-missing"]],
      ["metal3/r03-node-05", ["error[qat-missing"]],
      ["metal3/r05-node-01", ["warning[ip-duplicate"]],
      ["metal3/r05-node-02", ["warning[ip-duplicate"]],
      ["metal3/r05-node-03", ["error[host-unavailable"]],
      ["metal3/r05-node-04", ["warning[bmc-duplicate"]],
      ["metal3/r05-node-05", ["warning[bmc-duplicate"]],
    ]);
    expect((await state(page)).tiles).toBe(29);
    await expectScreenshot(await page.screenshot(), path.join(REFERENCES, "broken-site.png"));
    await page.close();
  });

  it("shows hosts changing hands in the legend and on their tiles", async () => {
    // The committed lock, and one more host another cluster had: r01-node-07 changes hands.
    const committed = await readFile(
      path.join(REPO, "examples", "site", "rendered", "metalsynth.lock.yaml"),
      "utf8",
    );
    const lock = path.join(scratch, "previous.lock.yaml");
    await writeFile(
      lock,
      `${committed}  - host: metal3/r01-node-07\n    cluster: edge-a/cluster-gone\n    kind: bpa\n    role: worker\n    node: worker-1\n`,
    );
    const page = await openMap(path.join(REPO, "examples", "site"), "--diff", lock);
    const shown = await state(page);
    expect(shown.legend).toEqual([...LEGEND, "changes hands: blue outline and ⇄", COLOUR_NOTE]);
    const moved = (await page.locator("g.t.mv > title").allTextContents()).map((title) =>
      title.split("\n").at(-1),
    );
    expect(moved).toEqual(["changes hands: edge-a/cluster-gone → free"]);
    await page.close();
  });

  it("runs none of what an inventory says: names and labels stay text", async () => {
    const evil = `<img src=x onerror="window.pwned=1">`;
    // Host names are checked at the door now; a set-aside host's finding still carries the name as written.
    const inventory = makeInventory([
      { name: "a-node", labels: { "vino.airshipit.org/rack": `</summary><script>window.pwned=2</script>` } },
      { name: "plain" },
    ]);
    const { plan, issues } = evaluateSite(parseDocuments("none.yaml", "").documents, inventory, EMPTY_LOCK);
    const setAside: Issue = {
      rule: "name-invalid",
      severity: "warning",
      path: "metadata.name",
      message: `metadata.name ${evil} is not a DNS-1123 subdomain`,
      host: `metal3/${evil}`,
    };
    const all = [...issues, setAside];
    const html = mapHtml(siteMap({ inventory, plan, issues: all, groupBy: "vino.airshipit.org/rack" }));
    const page = await browser.context.newPage();
    await page.setContent(html);
    const seen = {
      pwned: await page.evaluate("window.pwned"),
      images: await page.locator("img").count(),
      scripts: await page.locator("script").count(),
      groups: await page.locator(".gname").allTextContents(),
      findings: (await page.locator("body").textContent())?.includes(`metadata.name ${evil}`),
      names: await page.locator("g.t .nm").allTextContents(),
    };
    expect(seen).toEqual({
      pwned: undefined,
      images: 0,
      scripts: 1,
      groups: ["</summary><script>window.pwned=2</script>", "no vino.airshipit.org/rack"],
      findings: true,
      names: ["a-node", "plain"],
    });
    await page.close();
  });

  describe("at hub scale", () => {
    let hub: HubSite | undefined;
    afterAll(async () => {
      if (hub !== undefined) await rm(hub.site, { recursive: true, force: true });
    });

    it("opens the 1,000-cluster / 10,000-host fleet collapsed, and its search finds one host", async () => {
      hub = await generateHubSite(10_000, 1_000);
      const page = await openMap(hub.site);
      const shown = await state(page);
      expect(shown.tiles).toBe(10_000);
      expect(shown.open).toEqual([]);
      expect(await page.locator("details.group").count()).toBe(500);
      await page.fill("#search", "r0042n07");
      const found = await state(page);
      expect([found.status, found.shown, found.open]).toEqual([
        "1 of 10000 hosts match",
        ["metal3/r0042n07"],
        ["r0042"],
      ]);
      expect(await page.locator("details.group:not([hidden])").count()).toBe(1);
      await page.close();
    }, 180_000);
  });
});
