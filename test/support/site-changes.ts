/**
 * Random changes to a small mixed site (Provisionings by MAC and by resources, Software,
 * SIPClusters; `bench/mixed-site.ts`, with services on every SIPCluster so its files show its hosts'
 * addresses and BMCs): CRs edited, removed and brought back, host facts changed in the inventory,
 * settings changed, rendered files edited by hand or deleted. The property tests of decisions 0057
 * (test/incremental.test.ts) and 0066 (test/synth-cache.test.ts) drive synth through them.
 */
import { readFile, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { writeMixedSite } from "../../bench/mixed-site.ts";
import { readTree } from "../../gitops/replace-dir.ts";
import { LOCK_FILE } from "../../synth/plan/lock-file.ts";

export const HOSTS = 120;
export const CLUSTERS = 12;
const SPECS = path.join("specs", "clusters.yaml");
const INVENTORY = path.join("inventory", "bmh.json");
const SETTINGS = "metalsynth.yaml";

/** One change to the site. */
export type Step =
  | { readonly kind: "plugins" | "package" | "drop" | "workers"; readonly cluster: number }
  | { readonly kind: "host"; readonly host: number; readonly fact: "ip" | "cpu" | "label" | "state" }
  | { readonly kind: "settings"; readonly variant: number }
  | { readonly kind: "edit" | "delete"; readonly file: number };

const cluster = fc.integer({ min: 0, max: CLUSTERS - 1 });
/** A random {@link Step}. */
export const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom("plugins", "package", "drop", "workers"), cluster }),
  fc.record({
    kind: fc.constant("host" as const),
    host: fc.nat({ max: HOSTS - 1 }),
    fact: fc.constantFrom("ip", "cpu", "label", "state"),
  }),
  fc.record({ kind: fc.constant("settings" as const), variant: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constantFrom("edit", "delete"), file: fc.nat() }),
);

/** What a step changes of a generated inventory object. */
interface GeneratedObject {
  readonly kind: string;
  readonly metadata: { readonly name: string; labels?: Record<string, string> };
  readonly status?: {
    readonly hardware?: { readonly nics?: { ip: string }[]; readonly cpu?: { count: number } };
    readonly provisioning?: { state: string };
  };
}

/** The CR documents of the specs file, and those a `drop` step took out, by cluster index. */
export interface Specs {
  readonly documents: string[];
  readonly dropped: Map<number, string[]>;
}

const name = (index: number) => `${index % 10 >= 8 ? "s" : "c"}${String(index).padStart(5, "0")}`;

/** The documents of cluster `index`: its Provisioning and Software, or its SIPCluster. */
function isOf(document: string, index: number): boolean {
  return new RegExp(`\\n {4}cluster: ${name(index)}\\n|\\n {2}name: ${name(index)}\\n`).test(document);
}

const SETTING_VARIANTS = [
  undefined,
  "apiVersion: metalsynth.io/v1alpha1\nkind: SiteSettings\nimages:\n  kubectl: bitnami/kubectl:1.28.0\n",
  "apiVersion: metalsynth.io/v1alpha1\nkind: SiteSettings\ngitops:\n  targets: [flux]\n",
  "apiVersion: metalsynth.io/v1alpha1\nkind: SiteSettings\ngit:\n  authorName: someone\n",
];

/** Applies one change to the site in `dir`. */
export async function apply(dir: string, specs: Specs, change: Step): Promise<void> {
  const toggle = (index: number, from: string, to: string) => {
    const at = specs.documents.findIndex((document) => isOf(document, index) && document.includes(from));
    const back = specs.documents.findIndex((document) => isOf(document, index) && document.includes(to));
    if (at >= 0) specs.documents[at] = specs.documents[at]!.replace(from, to);
    else if (back >= 0) specs.documents[back] = specs.documents[back]!.replace(to, from);
  };
  switch (change.kind) {
    case "plugins":
      toggle(change.cluster, "    - multus\n", "    - multus\n    - ovn4nfv\n");
      break;
    case "package":
      toggle(change.cluster, "version: 1.6-2.1ubuntu3", "version: 1.6-2.1ubuntu4");
      break;
    case "workers":
      toggle(change.cluster, "      count:\n        active: 2\n", "      count:\n        active: 1\n");
      break;
    case "drop": {
      const away = specs.dropped.get(change.cluster);
      if (away) {
        specs.documents.push(...away);
        specs.dropped.delete(change.cluster);
      } else {
        const mine = specs.documents.filter((document) => isOf(document, change.cluster));
        specs.dropped.set(change.cluster, mine);
        specs.documents.splice(
          0,
          specs.documents.length,
          ...specs.documents.filter((d) => !mine.includes(d)),
        );
      }
      break;
    }
    case "host": {
      const file = path.join(dir, INVENTORY);
      // The generator's own output: its shape is known (test/builders/inventory.ts).
      const list = JSON.parse(await readFile(file, "utf8")) as { items: GeneratedObject[] };
      // Mostly a host the lock gives a cluster, whose facts its files may show.
      const lock = await readFile(path.join(dir, "rendered", LOCK_FILE), "utf8");
      const held = new Set([...lock.matchAll(/^ {2}- host: metal3\/(\S+)$/gm)].map((match) => match[1]));
      const all = list.items.filter((item) => item.kind === "BareMetalHost");
      const chosen = change.host % 4 === 0 ? all : all.filter((item) => held.has(item.metadata.name));
      const hosts = chosen.length > 0 ? chosen : all;
      const host = hosts[change.host % hosts.length]!;
      if (change.fact === "ip") {
        const nic = host.status?.hardware?.nics?.[0];
        if (nic)
          nic.ip = nic.ip.endsWith(".250")
            ? nic.ip.replace(/\.250$/, ".1")
            : nic.ip.replace(/\.\d+$/, ".250");
      } else if (change.fact === "cpu") {
        const cpu = host.status?.hardware?.cpu;
        if (cpu) cpu.count = cpu.count === 64 ? 24 : 64;
      } else if (change.fact === "label") {
        const labels = (host.metadata.labels ??= {});
        labels["example.com/tier"] = labels["example.com/tier"] === "gold" ? "silver" : "gold";
      } else {
        const provisioning = host.status?.provisioning;
        if (provisioning)
          provisioning.state = provisioning.state === "provisioned" ? "available" : "provisioned";
      }
      await writeFile(file, JSON.stringify(list, null, 4));
      return;
    }
    case "settings": {
      const text = SETTING_VARIANTS[change.variant];
      if (text === undefined) await rm(path.join(dir, SETTINGS), { force: true });
      else await writeFile(path.join(dir, SETTINGS), text);
      return;
    }
    case "edit":
    case "delete": {
      const files = [...(await readTree(path.join(dir, "rendered"))).keys()].filter(
        (file) => file !== LOCK_FILE,
      );
      const file = files[change.file % files.length];
      if (file === undefined) return;
      const target = path.join(dir, "rendered", file);
      if (change.kind === "delete") await unlink(target);
      else await writeFile(target, `${await readFile(target, "utf8")}# edited by hand\n`);
      return;
    }
  }
  await writeFile(path.join(dir, SPECS), specs.documents.join(""));
}

/** Writes the site the steps change into `template`, a new directory. */
export async function writeChangingSite(template: string): Promise<void> {
  await writeMixedSite(template, HOSTS, CLUSTERS);
  // Services on every SIPCluster, so its files show its hosts' addresses and BMCs.
  const file = path.join(template, SPECS);
  const text = await readFile(file, "utf8");
  const services = (document: string): string => {
    const name = /^ {2}name: (s\d+)$/m.exec(document)?.[1];
    if (!document.includes("kind: SIPCluster") || name === undefined) return document;
    const port = 30000 + 10 * Number(name.slice(1));
    return (
      `${document}  services:\n` +
      `    loadBalancerControlPlane:\n      - nodeInterfaceId: eno1\n        nodePort: ${port}\n` +
      `    jumpHost:\n      - nodeInterfaceId: eno1\n        nodePort: ${port + 1}\n` +
      `        nodeSSHPrivateKeys: ${name}-ssh-keys\n`
    );
  };
  await writeFile(
    file,
    text
      .split(/(?=^---\n)/m)
      .map(services)
      .join(""),
  );
}

/** The specs file's documents, as {@link apply} keeps them, of the site in `dir`. */
export async function readSpecs(dir: string): Promise<Specs> {
  const text = await readFile(path.join(dir, SPECS), "utf8");
  return { documents: text.split(/(?=^---\n)/m), dropped: new Map() };
}
