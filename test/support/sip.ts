/**
 * Fixtures for the SIP chart tests (imported by `*.test.ts` only): SIPCluster plans made by running a
 * CR through the same rules and planner as synth, either the example site's `edge-sip/tenant-a` or a
 * small cluster over builder hosts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeHost, makeInventory, type HostOptions } from "../builders/inventory.ts";
import { evaluateYaml } from "../harness.ts";
import { filesUnder } from "./files.ts";
import { parseDocuments } from "../../synth/codec/read-documents.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { buildInventory } from "../../synth/inventory/load.ts";
import { EMPTY_LOCK } from "../../synth/rules/lock.ts";
import type { Lock } from "../../synth/model/lock.ts";
import type { ClusterPlan, SipClusterPlan } from "../../synth/plan/model.ts";
import type { SipClusterSpec } from "../../synth/schema/sipcluster.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import { resolvePathPrefix } from "../../synth/site/path-prefix.ts";
import { readSettings } from "../../synth/site/settings.ts";
import { toYaml } from "../../synth/codec/yaml-output.ts";

const EXAMPLE_SITE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/site");

let example: { readonly plan: SipClusterPlan; readonly settings: SiteSettings } | undefined;

/**
 * The example site's SIPCluster `edge-sip/tenant-a` and settings, read as synth reads them. Read once
 * per test file: plans are never modified, tests derive changed copies.
 */
export function examplePlan(): { readonly plan: SipClusterPlan; readonly settings: SiteSettings } {
  example ??= readExample();
  return example;
}

function readExample(): { plan: SipClusterPlan; settings: SiteSettings } {
  const parse = (file: string) => parseDocuments(file, readFileSync(file, "utf8"));
  const inventory = buildInventory(
    filesUnder(path.join(EXAMPLE_SITE, "inventory")).flatMap((file) =>
      parse(file).documents.map((document) => ({ value: document.value, source: document.position([]) })),
    ),
  );
  const specs = filesUnder(path.join(EXAMPLE_SITE, "specs")).map(parse);
  const settings = readSettings(parse(path.join(EXAMPLE_SITE, "metalsynth.yaml")).documents);
  const evaluation = evaluateSite(
    specs.flatMap((file) => file.documents),
    inventory.inventory,
    EMPTY_LOCK,
  );
  const problems = [...inventory.issues, ...settings.issues, ...specs.flatMap((file) => file.issues)];
  if (problems.length > 0 || evaluation.issues.length > 0) {
    throw new Error(`example site has issues: ${JSON.stringify([...problems, ...evaluation.issues])}`);
  }
  return {
    plan: sipPlanOf(evaluation.plan.clusters, "edge-sip/tenant-a"),
    // The example site sets its path prefix; the place is not asked.
    settings: resolvePathPrefix(settings.settings, undefined).settings,
  };
}

/** `spec.services` of a SIPCluster. */
export type SipServices = NonNullable<SipClusterSpec["spec"]["services"]>;

/** A host of {@link sipPlan}'s inventory: control-plane or worker flavour, address on `oam-ipv4`. */
export function sipHost(name: string, flavor: string, oamIp: string, options: HostOptions = {}) {
  return makeHost({
    name,
    namespace: "metal3",
    labels: { "vino.airshipit.org/flavor": flavor },
    networks: { "oam-ipv4": oamIp },
    bmc: {
      address: `redfish+https://${oamIp.replace(/^10\.41/, "10.20")}/redfish/v1/Systems/1`,
      credentialsName: `${name}-bmc`,
    },
    ...options,
  });
}

/** Three control-plane and three worker hosts on 10.41.0.0/24. */
export const SIP_HOSTS = () => [
  sipHost("cp-1", "control-plane", "10.41.0.11"),
  sipHost("cp-2", "control-plane", "10.41.0.12"),
  sipHost("cp-3", "control-plane", "10.41.0.13"),
  sipHost("wk-1", "worker", "10.41.0.21"),
  sipHost("wk-2", "worker", "10.41.0.22"),
  sipHost("wk-3", "worker", "10.41.0.23"),
];

/** An OpenSSH public key that passes the `ssh-key` rule. */
export const PUBLIC_KEY =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM8u0Z4+88F1dyoQt/UfAgSmyZCbWngnlNSbqbHOvluv ops@site-a";

/** Overrides of {@link sipPlan}. */
export interface SipPlanOptions {
  /** @default 2 active + 1 standby */
  readonly controlPlane?: { readonly active: number; readonly standby: number };
  /** @default 2 active + 0 standby */
  readonly worker?: { readonly active: number; readonly standby: number };
  /** @default one of each service on `oam-ipv4`, ports 30443, 30100–30101, 30022, no images */
  readonly services?: SipServices;
  /** @default {@link SIP_HOSTS} */
  readonly hosts?: ReturnType<typeof makeHost>[];
  /** A lock from an earlier run, e.g. to release a host. */
  readonly lock?: Lock;
}

/** A small SIPCluster `edge-sip/tenant-a`, planned against {@link SIP_HOSTS}. */
export function sipPlan(options: SipPlanOptions = {}): SipClusterPlan {
  const role = (flavor: string, count: { readonly active: number; readonly standby: number }) => ({
    labelSelector: { matchLabels: { "vino.airshipit.org/flavor": flavor } },
    count,
  });
  const services: SipServices = options.services ?? {
    loadBalancerControlPlane: [{ nodeInterfaceId: "oam-ipv4", nodePort: 30443 }],
    loadBalancerWorker: [{ nodeInterfaceId: "oam-ipv4", nodePortRange: { start: 30100, end: 30101 } }],
    jumpHost: [
      {
        nodeInterfaceId: "oam-ipv4",
        nodePort: 30022,
        sshAuthorizedKeys: [PUBLIC_KEY],
        nodeSSHPrivateKeys: "tenant-a-ssh-keys",
      },
    ],
  };
  const yaml = toYaml({
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name: "tenant-a", namespace: "edge-sip" },
    spec: {
      nodes: {
        ControlPlane: role("control-plane", options.controlPlane ?? { active: 2, standby: 1 }),
        Worker: role("worker", options.worker ?? { active: 2, standby: 0 }),
      },
      services,
    },
  });
  const evaluation = evaluateYaml(yaml, makeInventory(options.hosts ?? SIP_HOSTS()), options.lock);
  // Hosts sharing an address are rendered on purpose by some chart tests: `ip-duplicate` warns of them.
  if (evaluation.all.some((found) => found.rule !== "ip-duplicate"))
    throw new Error(`fixture has issues:\n${yaml}\n${JSON.stringify(evaluation.all, null, 2)}`);
  return sipPlanOf(evaluation.plan.clusters, "edge-sip/tenant-a");
}

function sipPlanOf(clusters: readonly ClusterPlan[], key: string): SipClusterPlan {
  const plan = clusters.find((cluster) => cluster.key === key && cluster.kind === "sip");
  if (plan?.kind !== "sip") throw new Error(`no SIPCluster plan ${key}`);
  return plan;
}
