/**
 * Draws a {@link SiteMap} as one self-contained HTML page: inline SVG tiles per group (rack), a
 * little CSS, one small script for the search box and nothing fetched. The same map gives the same
 * bytes (no clock, no paths but those in the input), so a map can be committed or attached to a
 * pull request. Every colour has a text alternative: the tile's words, its pattern, and a legend.
 */
import { issueText, oneLine, type Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import { formatBytes } from "../quantity.ts";
import { FILTER_PLUGINS } from "../rules/filters.ts";
import { freeShapeText, type Capacity } from "./capacity.ts";
import {
  isControlPlane,
  type Holding,
  type MapCluster,
  type MapGroup,
  type MapHost,
  type SiteMap,
} from "./site-map.ts";

/** The first cluster colours (Tableau 10 without its red, kept for findings, and grey, kept for free hosts). */
const TABLEAU = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"];

/**
 * Clusters with a colour of their own; past this many, colours repeat (the name on each tile tells
 * them apart). Each colour costs the page CSS rules that every tile is matched against: a hub of
 * 1,000 clusters with a colour each made the browser's style recalculation, and its search, crawl.
 */
const MAX_COLOURS = 64;

/**
 * A colour for each of `count` clusters, no two alike: Tableau's first, then hues a golden angle
 * apart (away from the findings' red), at three lightnesses in turn. Reusing the palette round-robin
 * painted two clusters of a site with more than eight the same, and the colour is how a reader tells
 * whose a rack's tiles are at a glance.
 */
export function clusterPalette(count: number): string[] {
  const palette = TABLEAU.slice(0, count);
  const used = new Set(palette);
  for (let index = palette.length; index < count; index++) {
    const step = index - TABLEAU.length;
    let hue = 30 + ((step * 137.508) % 300);
    let colour = hslHex(hue, 0.55, [0.45, 0.6, 0.35][step % 3] ?? 0.45);
    // Rounding to 8 bits a channel can land two hues on one colour: nudge until it is new.
    while (used.has(colour)) colour = hslHex((hue = 30 + ((hue - 30 + 0.7) % 300)), 0.55, 0.45);
    used.add(colour);
    palette.push(colour);
  }
  return palette;
}

/** `#rrggbb` of a hue in degrees, saturation and lightness in [0, 1]. */
function hslHex(hue: number, saturation: number, lightness: number): string {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const value = lightness - (chroma * Math.max(-1, Math.min(k - 3, 9 - k, 1))) / 2;
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, "0");
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

const TILE = { width: 196, height: 96, gap: 8, columns: 4 } as const;

/** Groups and clusters start open up to these sizes; a hub's start collapsed so the page stays light. */
const OPEN_GROUPS_UP_TO_HOSTS = 200;
const OPEN_CLUSTERS_UP_TO = 12;

/** Text for HTML content and attribute values: nothing a host name or label holds can become markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** What a map shows, in a few phrases: the page's header line and the CLI's summary. */
export function mapFacts(map: SiteMap): string[] {
  const withFindings = map.groups.reduce(
    (count, group) => count + group.hosts.filter((mapHost) => mapHost.findings.length > 0).length,
    0,
  );
  return [
    `${map.hostCount} host${plural(map.hostCount)} in ${map.groups.length} group${plural(map.groups.length)} by ${groupingWord(map)}`,
    `${map.clusters.length} cluster${plural(map.clusters.length)}`,
    `${map.capacity.freeHosts} free`,
    `${withFindings} with findings`,
    ...(map.changes ? [`${map.changes.hosts.length} changing hands against ${map.changes.source}`] : []),
  ];
}

function groupingWord(map: SiteMap): string {
  return "label" in map.groupBy ? map.groupBy.label : "namespace";
}

/** The whole page. */
export function mapHtml(map: SiteMap): string {
  // Never fewer than Tableau's eight: the legend's swatches use the first even on a site without clusters.
  const palette = clusterPalette(Math.min(Math.max(TABLEAU.length, map.clusters.length), MAX_COLOURS));
  const colours = new Map(map.clusters.map((cluster) => [cluster.key, cluster.colour % palette.length]));
  const groupWord = groupingWord(map);
  const facts = mapFacts(map);
  const openGroups = map.hostCount <= OPEN_GROUPS_UP_TO_HOSTS;
  return [
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n`,
    `<title>metalsynth site map</title>\n<style>\n${css(palette)}</style>\n</head>\n<body>\n`,
    `<header>\n<h1>Site map</h1>\n<p class="facts">${escapeHtml(facts.join(" · "))}</p>\n`,
    `<div class="search"><label for="search">Find a host, cluster or MAC</label> `,
    `<input id="search" type="search" autocomplete="off" spellcheck="false" placeholder="r01-node-04, tenant-a, 3c:fd:fe…">`,
    ` <output id="search-status" for="search" aria-live="polite"></output></div>\n</header>\n`,
    patterns(palette),
    `<main>\n<section class="groups" aria-labelledby="groups-heading">\n`,
    `<h2 id="groups-heading">Hosts by ${escapeHtml(groupWord)}</h2>\n`,
    legend(map, colours),
    ...map.groups.map((group) => groupSection(group, groupWord, colours, openGroups)),
    `</section>\n<aside>\n`,
    clustersSection(map.clusters, colours),
    capacitySection(map.capacity),
    map.changes ? changesSection(map.changes) : "",
    findingsSection(map.siteFindings),
    `</aside>\n</main>\n<script>\n${SEARCH_SCRIPT}</script>\n</body>\n</html>\n`,
  ].join("");
}

function plural(count: number): string {
  return count === 1 ? "" : "s";
}

/** A colour mixed with white: tile backgrounds light enough for dark text. */
function tint(hex: string, share: number): string {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16);
    return Math.round(255 - (255 - value) * share)
      .toString(16)
      .padStart(2, "0");
  };
  return `#${channel(1)}${channel(3)}${channel(5)}`;
}

function css(palette: readonly string[]): string {
  const clusterRules = palette
    .map(
      (colour, index) =>
        `.k${index} .bg{fill:${tint(colour, 0.3)}}.k${index} .band{fill:${colour}}` +
        `.k${index}.wk .band{fill:url(#stripes${index})}.k${index}.rl .bg{stroke:${colour}}` +
        `.sw.k${index}{background:${colour}}\n`,
    )
    .join("");
  return `${BASE_CSS}${clusterRules}`;
}

const BASE_CSS = `:root{color-scheme:light;font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;font-size:14px;color:#1b1b1b;background:#fff}
body{margin:0 16px 24px}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 24px;border-bottom:1px solid #ccc;padding:8px 0}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:16px 0 8px}h3{font-size:14px;margin:12px 0 4px}
.facts{margin:0;color:#333}
.search label{font-weight:bold;margin-right:6px}
#search{font:inherit;padding:3px 6px;width:18em;border:1px solid #666;border-radius:3px}
#search:focus{outline:3px solid #1d3fbf;outline-offset:1px}
main{display:grid;grid-template-columns:minmax(0,max-content) minmax(320px,1fr);gap:8px 24px;align-items:start}
details.group{margin:0 0 6px}
details.group>summary{cursor:pointer;padding:3px 0}
summary:focus-visible{outline:3px solid #1d3fbf}
.gname{font-weight:bold}
svg.tiles{display:block;font-size:11px}
.t text{fill:#1b1b1b}.t .nm{font-weight:bold;font-size:12px}.t .who{font-weight:bold}.t .st{fill:#444}
.t .bg{fill:#f2f2f2;stroke:#8a8a8a;stroke-width:1}
.t.fr .bg{fill:#fafafa;stroke:#b5b5b5}
.t.rl .bg{fill:#fff;stroke-width:2.5;stroke-dasharray:7 4}
.t .hatch{fill:url(#hatch)}
.t .bd{fill:#fff;stroke:#555}.t .bt{font-size:9px;font-weight:bold}
.t.bad .bg{stroke:#c1121f;stroke-width:3}
.t .fm{fill:#c1121f}.t .fx{fill:#fff;font-weight:bold;font-size:13px}
.t .mv{fill:none;stroke:#1d3fbf;stroke-width:2}.t .mx{fill:#1d3fbf;font-weight:bold;font-size:13px}
.t.miss{opacity:.15}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:0 0 10px;padding:0;list-style:none;font-size:12px;max-width:820px}
.legend li{display:flex;align-items:center;gap:6px}
.legend svg{font-size:11px}
.sw{display:inline-block;width:12px;height:12px;border:1px solid #555;vertical-align:-1px;margin-right:4px}
aside{font-size:13px}
details.cluster{border-top:1px solid #ddd;padding:4px 0}
details.cluster>summary{cursor:pointer}
table{border-collapse:collapse;margin:4px 0 8px}
th,td{text-align:left;padding:1px 8px 1px 0;vertical-align:top}
th{font-weight:bold;border-bottom:1px solid #ccc}
td.n{text-align:right}
.unplaced,.finding{margin:2px 0;padding-left:8px;border-left:3px solid #c1121f}
.finding.warning{border-left-color:#b8860b}
.muted{color:#555}
`;

/** Shared SVG patterns: a striped band per cluster colour (workers) and the standby hatching. */
function patterns(palette: readonly string[]): string {
  const stripes = palette
    .map(
      (colour, index) =>
        `<pattern id="stripes${index}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
        `<rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="${colour}"/></pattern>`,
    )
    .join("");
  return (
    `<svg width="0" height="0" style="position:absolute" aria-hidden="true" focusable="false"><defs>${stripes}` +
    `<pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse">` +
    `<path d="M0 8L8 0M-2 2L2 -2M6 10L10 6M0 0L8 8M-2 6L2 10M6 -2L10 2" stroke="#333" stroke-width="1" opacity=".3"/>` +
    `</pattern></defs></svg>\n`
  );
}

/** A tile's classes and words: the colour and pattern classes, and what they say in text. */
interface TileLook {
  readonly classes: string;
  /** Drawn with a role band: held by a cluster (or being released by one). */
  readonly held: boolean;
  /** Hatched: a standby host. */
  readonly standby: boolean;
  /** The cluster line: its name, or `free`. */
  readonly holder: string;
  /** The role line: `master-1 (master)`, `ControlPlane · standby`, `Worker · releasing`. */
  readonly role: string;
}

function holdingText(holding: Holding): string {
  const { role, node } = holding;
  const named = node === undefined ? role : node.startsWith(role) ? node : `${role} ${node}`;
  const states = [
    ...(holding.standby ? ["standby"] : []),
    ...(holding.released ? ["releasing"] : []),
    ...(holding.kind === "label" ? ["SIP labels"] : []),
  ];
  return [named, ...states].join(" · ");
}

function tileLook(mapHost: MapHost, colours: ReadonlyMap<string, number>): TileLook {
  const marks = [
    ...(mapHost.findings.length > 0 ? ["bad"] : []),
    ...(mapHost.change === undefined ? [] : ["mv"]),
  ];
  const held = mapHost.holdings.filter((holding) => !holding.released);
  const first = held[0] ?? mapHost.holdings[0];
  if (first === undefined)
    return {
      classes: ["t", "fr", ...marks].join(" "),
      held: false,
      standby: false,
      holder: "free",
      role: "",
    };
  const shown = held.length > 0 ? held : mapHost.holdings;
  const clusters = [...new Set(shown.map((holding) => holding.cluster))];
  const standby = shown.some((holding) => holding.standby);
  const look = [
    "t",
    `k${colours.get(first.cluster) ?? 0}`,
    isControlPlane(first.role) ? "cp" : "wk",
    ...(held.length === 0 ? ["rl"] : []),
    ...(standby ? ["sb"] : []),
    ...marks,
  ];
  return {
    classes: look.join(" "),
    held: true,
    standby,
    holder: clusters.map((cluster) => cluster.slice(cluster.indexOf("/") + 1)).join(" + "),
    role: shown.map(holdingText).join(" + "),
  };
}

function resourcesText(host: Host): string {
  if (host.cpus === undefined && host.memoryBytes === undefined) return "not inspected";
  const cpus = host.cpus === undefined ? "? CPUs" : `${host.cpus} CPUs`;
  const memory = host.memoryBytes === undefined ? "? memory" : formatBytes(host.memoryBytes);
  return `${cpus} · ${memory}`;
}

/** At most `max` characters, the rest as `…` (SVG text does not wrap; the tooltip has it whole). */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** The tooltip: everything the tile shows, unabridged, plus MACs, findings and the change. */
function tileTitle(mapHost: MapHost, groupWord: string, groupName: string): string {
  const { host } = mapHost;
  // Each resource filter's plugin words what the host has of what it reads.
  const hardware = FILTER_PLUGINS.flatMap((plugin) => plugin.has?.(host) ?? []);
  const lines = [
    host.id,
    `${groupWord}: ${groupName}`,
    hardware.join(", "),
    `state: ${host.provisioningState ?? "none (not inspected or provisioned)"}`,
    ...(mapHost.holdings.length === 0
      ? ["free"]
      : mapHost.holdings.map((holding) => `${holding.cluster}: ${holdingText(holding)}`)),
    ...(host.macs.length > 0 ? [`MACs: ${host.macs.join(", ")}`] : []),
    // One line each, as the CLI prints them: the tooltip's lines are split on line breaks.
    ...mapHost.findings.map((found) =>
      oneLine(`${found.severity}[${found.rule}] ${found.path}: ${found.message}`),
    ),
    ...(mapHost.change === undefined
      ? []
      : [`changes hands: ${clusterList(mapHost.change.before)} → ${clusterList(mapHost.change.after)}`]),
  ];
  return lines.join("\n");
}

function clusterList(clusters: readonly string[]): string {
  return clusters.length === 0 ? "free" : clusters.join(" + ");
}

/** Badges for SR-IOV and QAT, right-aligned on the name line; returns their markup and width. */
function badges(host: Host): { markup: string; width: number } {
  const labels = [...(host.sriov ? ["SR-IOV"] : []), ...(host.qat ? ["QAT"] : [])];
  let right = TILE.width - 6;
  const parts: string[] = [];
  for (const label of [...labels].reverse()) {
    const width = label.length * 6 + 8;
    right -= width;
    parts.push(
      `<rect class="bd" x="${right}" y="6" width="${width}" height="14" rx="3"/>` +
        `<text class="bt" x="${right + width / 2}" y="16.5" text-anchor="middle">${label}</text>`,
    );
    right -= 4;
  }
  return { markup: parts.reverse().join(""), width: TILE.width - 6 - right };
}

function tile(
  mapHost: MapHost,
  x: number,
  y: number,
  groupWord: string,
  groupName: string,
  look: TileLook,
): string {
  const { host } = mapHost;
  const { width, height } = TILE;
  const search = [host.id, ...mapHost.holdings.flatMap((h) => [h.cluster, h.node ?? ""]), ...host.macs]
    .filter((word) => word !== "")
    .join(" ")
    .toLowerCase();
  const badge = badges(host);
  // About 7.2 px per character of the bold 12 px name.
  const nameRoom = Math.floor((width - 14 - badge.width - 4) / 7.2);
  const parts = [
    `<g class="${look.classes}" transform="translate(${x} ${y})" data-s="${escapeHtml(search)}">`,
    `<title>${escapeHtml(tileTitle(mapHost, groupWord, groupName))}</title>`,
    `<rect class="bg" width="${width}" height="${height}" rx="5"/>`,
    look.held ? `<rect class="band" x="1" y="1" width="8" height="${height - 2}"/>` : "",
    look.standby ? `<rect class="hatch" width="${width}" height="${height}" rx="5"/>` : "",
    mapHost.change === undefined
      ? ""
      : `<rect class="mv" x="-3.5" y="-3.5" width="${width + 7}" height="${height + 7}" rx="7"/>`,
    `<text class="nm" x="14" y="18">${escapeHtml(clip(host.name, nameRoom))}</text>`,
    badge.markup,
    `<text x="14" y="35">${escapeHtml(resourcesText(host))}</text>`,
    `<text class="st" x="14" y="51">${escapeHtml(clip(host.provisioningState ?? "no state", 30))}</text>`,
    `<text class="who" x="14" y="69">${escapeHtml(clip(look.holder, 28))}</text>`,
    look.role === "" ? "" : `<text x="14" y="86">${escapeHtml(clip(look.role, 30))}</text>`,
    mapHost.change === undefined
      ? ""
      : `<text class="mx" x="${width - (mapHost.findings.length > 0 ? 44 : 20)}" y="88">⇄</text>`,
    mapHost.findings.length === 0
      ? ""
      : `<path class="fm" d="M${width - 26} ${height}L${width} ${height - 26}V${height - 5}Q${width} ${height} ${width - 5} ${height}Z"/>` +
        `<text class="fx" x="${width - 9}" y="${height - 5}" text-anchor="middle">!</text>`,
    `</g>`,
  ];
  return parts.join("");
}

function groupSection(
  group: MapGroup,
  groupWord: string,
  colours: ReadonlyMap<string, number>,
  open: boolean,
): string {
  const name = group.name ?? `no ${groupWord}`;
  const held = group.hosts.filter((mapHost) => mapHost.holdings.length > 0).length;
  const bad = group.hosts.filter((mapHost) => mapHost.findings.length > 0).length;
  const moving = group.hosts.filter((mapHost) => mapHost.change !== undefined).length;
  const counts = [
    `${group.hosts.length} host${plural(group.hosts.length)}`,
    `${held} held`,
    `${group.hosts.length - held} free`,
    ...(bad > 0 ? [`${bad} with findings`] : []),
    ...(moving > 0 ? [`${moving} changing hands`] : []),
  ];
  const { width, height, gap, columns } = TILE;
  const rows = Math.ceil(group.hosts.length / columns);
  const svgWidth = columns * (width + gap) + gap;
  const svgHeight = rows * (height + gap) + gap;
  const tiles = group.hosts.map((mapHost, index) => {
    const x = gap + (index % columns) * (width + gap);
    const y = gap + Math.floor(index / columns) * (height + gap);
    return tile(mapHost, x, y, groupWord, name, tileLook(mapHost, colours));
  });
  return (
    `<details class="group"${open ? " open data-open" : ""}>` +
    `<summary><span class="gname">${escapeHtml(name)}</span> <span class="muted">${counts.join(" · ")}</span></summary>\n` +
    `<svg class="tiles" width="${svgWidth}" height="${svgHeight}" viewBox="0 0 ${svgWidth} ${svgHeight}" role="group" aria-label="${escapeHtml(`${groupWord} ${name}`)}">` +
    `${tiles.join("\n")}</svg>\n</details>\n`
  );
}

/** One legend entry: a small tile in the given classes, then what it means. */
function swatch(classes: string, text: string, extra = ""): string {
  return (
    `<li><svg width="40" height="24" aria-hidden="true"><g class="${classes}" transform="translate(3 3)">` +
    `<rect class="bg" width="34" height="18" rx="3"/>` +
    (classes.includes(" fr") ? "" : `<rect class="band" x="1" y="1" width="7" height="16"/>`) +
    (classes.includes(" sb") ? `<rect class="hatch" width="34" height="18" rx="3"/>` : "") +
    `${extra}</g></svg>${escapeHtml(text)}</li>`
  );
}

function legend(map: SiteMap, colours: ReadonlyMap<string, number>): string {
  const first = map.clusters[0];
  const k = `k${first === undefined ? 0 : (colours.get(first.key) ?? 0)}`;
  const items = [
    swatch(`t ${k} cp`, "control plane (BPA master, SIP ControlPlane): solid band"),
    swatch(`t ${k} wk`, "worker (BPA worker, SIP Worker): striped band"),
    swatch(`t ${k} wk sb`, "standby: hatched"),
    swatch(`t ${k} wk rl`, "being released: dashed outline"),
    swatch("t fr", "free: grey, no band"),
    swatch(
      "t fr bad",
      "finding: red border and ! (rule ids in the tooltip)",
      `<path class="fm" d="M24 18L34 8V18Z"/>`,
    ),
    ...(map.changes
      ? [
          swatch(
            "t fr mv",
            "changes hands: blue outline and ⇄",
            `<rect class="mv" x="-2" y="-2" width="38" height="22" rx="4"/>`,
          ),
        ]
      : []),
  ];
  return (
    `<ul class="legend" aria-label="legend">${items.join("")}` +
    `<li>tile colour: the cluster holding the host (its name is on the tile)</li></ul>\n`
  );
}

function clustersSection(clusters: readonly MapCluster[], colours: ReadonlyMap<string, number>): string {
  const open = clusters.length <= OPEN_CLUSTERS_UP_TO;
  const parts = clusters.map((cluster) => {
    const counts = [
      `${cluster.hosts.length} host${plural(cluster.hosts.length)}`,
      ...(cluster.unplaced.length > 0 ? [`${cluster.unplaced.length} unplaced`] : []),
      ...(cluster.findings.length > 0
        ? [`${cluster.findings.length} finding${plural(cluster.findings.length)}`]
        : []),
    ];
    const rows = cluster.hosts.map(
      ({ host, holding }) =>
        `<tr><td>${escapeHtml(host)}</td><td>${escapeHtml(holdingText(holding))}</td></tr>`,
    );
    const table =
      rows.length === 0
        ? `<p class="muted">no hosts</p>`
        : `<table><thead><tr><th>host</th><th>role</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
    const unplaced = cluster.unplaced.map(
      (node) =>
        `<p class="unplaced"><b>${escapeHtml(node.subject)}</b> <span class="muted">(${escapeHtml(node.path)})</span>: ` +
        `${node.found} of ${node.wanted} placed. ${escapeHtml(node.histogram)}` +
        (node.problem === undefined ? "" : `<br>${escapeHtml(node.problem)}`) +
        `</p>`,
    );
    return (
      `<details class="cluster"${open ? " open" : ""}><summary>` +
      `<span class="sw k${colours.get(cluster.key) ?? 0}"></span><b>${escapeHtml(cluster.key)}</b> ` +
      `<span class="muted">${escapeHtml(cluster.kinds.join(" + "))} · ${counts.join(" · ")}</span></summary>\n` +
      `${table}${unplaced.join("")}${cluster.findings.map(findingLine).join("")}</details>\n`
    );
  });
  return `<section aria-labelledby="clusters-heading"><h2 id="clusters-heading">Clusters</h2>\n${parts.join("")}</section>\n`;
}

function findingLine(found: Issue): string {
  return `<p class="finding ${found.severity}">${escapeHtml(issueText(found))}</p>`;
}

function capacitySection(capacity: Capacity): string {
  const free = capacity.free.map(
    (shape) => `<tr><td>${escapeHtml(freeShapeText(shape))}</td><td class="n">${shape.hosts}</td></tr>`,
  );
  const requested = capacity.requested.map(
    (shape) =>
      `<tr><td>${shape.kind === "bpa" ? "BPA node" : "SIP role"}: ${escapeHtml(shape.shape)}</td>` +
      `<td class="n">${shape.requests}</td><td class="n">${shape.clusters}</td><td class="n">${shape.fit}</td></tr>`,
  );
  return (
    `<section aria-labelledby="capacity-heading"><h2 id="capacity-heading">Capacity</h2>\n` +
    `<h3>Free hosts by shape (${capacity.freeHosts})</h3>\n` +
    (free.length === 0
      ? `<p class="muted">no free hosts</p>\n`
      : `<table><thead><tr><th>CPUs × memory × features</th><th>hosts</th></tr></thead><tbody>${free.join("")}</tbody></table>\n`) +
    `<h3>Room for more nodes of the shapes the site asks for</h3>\n` +
    (requested.length === 0
      ? `<p class="muted">the site asks for no shapes (MAC entries only)</p>\n`
      : `<table><thead><tr><th>shape</th><th>asked by</th><th>clusters</th><th>more that fit</th></tr></thead>` +
        `<tbody>${requested.join("")}</tbody></table>\n` +
        `<p class="muted">Each shape on its own: shapes compete for the same free hosts.</p>\n`) +
    `</section>\n`
  );
}

function changesSection(changes: NonNullable<SiteMap["changes"]>): string {
  const rows = changes.hosts.map(
    (change) =>
      `<tr><td>${escapeHtml(change.host)}</td><td>${escapeHtml(clusterList(change.before))}</td>` +
      `<td>${escapeHtml(clusterList(change.after))}</td></tr>`,
  );
  return (
    `<section aria-labelledby="changes-heading"><h2 id="changes-heading">Hosts changing hands</h2>\n` +
    `<p class="muted">against ${escapeHtml(changes.source)}</p>\n` +
    (rows.length === 0
      ? `<p>none</p>\n`
      : `<table><thead><tr><th>host</th><th>before</th><th>after</th></tr></thead><tbody>${rows.join("")}</tbody></table>\n`) +
    `</section>\n`
  );
}

function findingsSection(findings: readonly Issue[]): string {
  if (findings.length === 0) return "";
  return (
    `<section aria-labelledby="findings-heading"><h2 id="findings-heading">Other findings</h2>\n` +
    `${findings.map(findingLine).join("\n")}\n</section>\n`
  );
}

/**
 * The one script: the search box marks the tiles whose host, cluster, node or MAC contain every word
 * typed, opens the groups holding one and hides the others. It reads the tiles' `data-s` attributes
 * and writes nothing into the page but classes and a count, so no site data is ever run as code.
 */
const SEARCH_SCRIPT = `(() => {
  const input = document.getElementById("search");
  const status = document.getElementById("search-status");
  const groups = Array.from(document.querySelectorAll("details.group"), (group) => ({
    group,
    tiles: Array.from(group.querySelectorAll("g.t"), (tile) => [tile, tile.getAttribute("data-s") || ""]),
  }));
  const total = groups.reduce((sum, entry) => sum + entry.tiles.length, 0);
  input.addEventListener("input", () => {
    const words = input.value.toLowerCase().split(/\\s+/).filter(Boolean);
    let hits = 0;
    for (const { group, tiles } of groups) {
      let found = 0;
      for (const [tile, text] of tiles) {
        const hit = words.every((word) => text.includes(word));
        tile.classList.toggle("miss", words.length > 0 && !hit);
        if (hit) found++;
      }
      hits += found;
      group.hidden = words.length > 0 && found === 0;
      group.open = words.length > 0 ? found > 0 : group.hasAttribute("data-open");
    }
    status.textContent = words.length > 0 ? hits + " of " + total + " hosts match" : "";
  });
})();
`;
