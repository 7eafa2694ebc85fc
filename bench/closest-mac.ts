/**
 * The closest-MAC search of `mac-unknown` (decision 0020) with generated inventories of 10,000 and
 * 100,000 hosts: median and p99 of one lookup for a typo (one or two hex digits off a known MAC) and
 * for a MAC far from every known one (`aa:bb:cc:dd:ee:ff` and random MACs of another vendor), and
 * what building the index on the first lookup costs.
 *
 * Run standalone with `npx tsx bench/closest-mac.ts`; `benchClosestMac()` returns the printable lines.
 */
import { pathToFileURL } from "node:url";
import { buildInventory, type Inventory } from "./product.ts";
import { generateBmhs, mulberry32 } from "../test/builders/inventory.ts";
import { milliseconds, percentile, timeRuns } from "./stats.ts";

const SIZES = [10_000, 100_000] as const;
const LOOKUPS = 200;
const RUNS = 2000;
const HEX = "0123456789abcdef";

/** The generated inventory (the seed bench/webhook.ts uses). */
function inventory(hosts: number): Inventory {
  const objects = [...generateBmhs(hosts, { seed: 8 })].map((value, index) => ({
    value,
    source: { file: "bench", line: index + 1, column: 1 },
  }));
  return buildInventory(objects).inventory;
}

/** `mac` with the hex digits at `positions` (of the 12) replaced by others. */
function mistyped(mac: string, positions: readonly number[], random: () => number): string {
  const characters = [...mac];
  for (const position of positions) {
    const at = position + Math.floor(position / 2);
    const old = characters[at] ?? "0";
    const others = HEX.replace(old, "");
    characters[at] = others[Math.floor(random() * others.length)] ?? "0";
  }
  return characters.join("");
}

/** A MAC of the locally administered range `02:…`, which the generated inventory never uses. */
function farMac(random: () => number): string {
  const octets = ["02"];
  for (let octet = 1; octet < 6; octet++) {
    octets.push(
      Math.floor(random() * 256)
        .toString(16)
        .padStart(2, "0"),
    );
  }
  return octets.join(":");
}

/** Median and p99 of looking up each of `macs` in turn, `RUNS` lookups in all. */
function lookups(hosts: Inventory, macs: readonly string[]): string {
  let next = 0;
  const times = timeRuns(() => {
    hosts.closestMac(macs[next++ % macs.length] ?? "");
  }, RUNS);
  return `median ${milliseconds(percentile(times, 0.5))}, p99 ${milliseconds(percentile(times, 0.99))}`;
}

/** The printable figures, one line each. */
export function benchClosestMac(): string[] {
  const lines: string[] = [];
  for (const size of SIZES) {
    const hosts = inventory(size);
    const random = mulberry32(2026);
    const known = hosts.hosts.flatMap((host) => host.macs);
    const pick = (): string => known[Math.floor(random() * known.length)] ?? "";
    const typos = Array.from({ length: LOOKUPS }, (_, index) => {
      const first = Math.floor(random() * 12);
      const second = (first + 1 + Math.floor(random() * 11)) % 12;
      return mistyped(pick(), index % 2 === 0 ? [first] : [first, second], random);
    }).filter((mac) => hosts.byMac(mac) === undefined);
    const far = ["aa:bb:cc:dd:ee:ff", ...Array.from({ length: LOOKUPS }, () => farMac(random))];

    const started = performance.now();
    hosts.closestMac("aa:bb:cc:dd:ee:ff");
    const build = performance.now() - started;
    lines.push(
      `${size} hosts (${known.length} MACs): first lookup, index built ${milliseconds(build)}`,
      `  typo (1-2 digits off)     ${lookups(hosts, typos)}`,
      `  aa:bb:cc:dd:ee:ff         ${lookups(hosts, ["aa:bb:cc:dd:ee:ff"])}`,
      `  far (random 02:… MACs)    ${lookups(hosts, far)}`,
    );
  }
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const line of benchClosestMac()) console.log(line);
}
