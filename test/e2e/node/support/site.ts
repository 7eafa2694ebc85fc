/**
 * The node tier's test site: test/support/trust-site.ts's small site (a SIPCluster with its three
 * services over three control-plane and two worker hosts, a BPA cluster with KUD and Software over a
 * master and a worker) with IPv4 addresses the node can give test hosts, an operator key pair of the
 * test's own in the jump host's `sshAuthorizedKeys`, and packages the test hosts' package source
 * holds. Rendered by this clone's CLI (`metalsynth synth`, built by the global setup); the tests apply
 * what it writes as it is.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { REPO } from "../../../harness.ts";
import { filesUnder } from "../../../support/files.ts";
import {
  BASELINE,
  plannedReadings,
  siteFiles,
  type PlannedReadings,
  type SiteValues,
} from "../../../support/trust-site.ts";
import { exec, must, readObjects, registrable, type KubeObject, type Kubectl } from "../../support/kube.ts";

/** An SSH key pair in files. */
export interface KeyPair {
  readonly privateKeyFile: string;
  readonly privateKey: string;
  readonly publicKey: string;
}

/** A rendered test site. */
export interface NodeSite {
  readonly dir: string;
  readonly values: SiteValues;
  readonly planned: PlannedReadings;
  /** The operators' key: the jump host's `sshAuthorizedKeys`. */
  readonly operatorKey: KeyPair;
  /** The nodes' key: the test hosts let it in; the Secrets the manifests reference hold it. */
  readonly nodeKey: KeyPair;
  /** A key no one lets in. */
  readonly strangerKey: KeyPair;
  /** `rendered/clusters/<ns>/<name>` of the SIPCluster and of the BPA cluster. */
  readonly sipDirectory: string;
  readonly bpaDirectory: string;
  /** The site's BareMetalHosts, as a user registers them. */
  readonly hosts: readonly KubeObject[];
}

/** The packages the Software CR asks for on the master, as the test hosts' package source has them. */
export const MASTER_PACKAGES = [
  { name: "metalsynth-probe" },
  { name: "metalsynth-probe-extra", version: "2.1-1" },
] as const;

/** A new key pair (ed25519) in `dir`. */
export async function keyPair(dir: string, name: string): Promise<KeyPair> {
  const privateKeyFile = path.join(dir, name);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `${name}@e2e`, "-f", privateKeyFile]);
  return {
    privateKeyFile,
    privateKey: await readFile(privateKeyFile, "utf8"),
    publicKey: (await readFile(`${privateKeyFile}.pub`, "utf8")).trim(),
  };
}

/** Writes the test site into a new directory and renders it with `metalsynth synth`. */
export async function renderNodeSite(): Promise<NodeSite> {
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-node-site-"));
  const keys = path.join(dir, "keys");
  await mkdir(keys);
  const [operatorKey, nodeKey, strangerKey] = await Promise.all(
    ["operator", "node", "stranger"].map((name) => keyPair(keys, name)),
  );
  const values: SiteValues = {
    ...BASELINE,
    // Every control-plane host on IPv4, as the node's pods are.
    controlPlane: BASELINE.controlPlane.map((host, index) =>
      index === 2 ? { ...host, ip: "10.41.0.13" } : host,
    ),
    sshAuthorizedKeys: [operatorKey!.publicKey],
    masterPackages: MASTER_PACKAGES,
  };
  for (const [file, text] of siteFiles(values)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), file === "specs/sipcluster.yaml" ? withoutAuth(text) : text);
  }
  const synth = await exec(process.execPath, [
    path.join(REPO, "bin", "metalsynth.js"),
    "synth",
    "--site",
    dir,
  ]);
  if (synth.code !== 0)
    throw new Error(`metalsynth synth of the node site failed:\n${synth.stdout}${synth.stderr}`);
  const planned = plannedReadings(values);
  const hosts = (await readObjects(filesUnder(path.join(dir, "inventory")))).filter(
    (object) => object.kind === "BareMetalHost",
  );
  return {
    dir,
    values,
    planned,
    operatorKey: operatorKey!,
    nodeKey: nodeKey!,
    strangerKey: strangerKey!,
    sipDirectory: path.join(dir, "rendered", planned.sipDirectory),
    bpaDirectory: path.join(dir, "rendered", planned.bpaDirectory),
    hosts: hosts.map(registrable),
  };
}

/**
 * The SIPCluster without its auth service (Dex, issue #39): its issuer is the fuzz site's address,
 * not the node's, and its CA's key exists nowhere, so no serving certificate could be issued for it.
 * Dex runs on the node in a site of its own (`test/e2e/node/auth.test.ts`).
 */
function withoutAuth(text: string): string {
  return parseAllDocuments(text)
    .map((document) => {
      const object = document.toJS() as { spec?: { services?: Record<string, unknown> } };
      delete object.spec?.services?.auth;
      return stringify(object);
    })
    .join("---\n");
}

/** `kubectl kustomize <directory>`: what both agents build and apply. */
export async function build(kubectl: Kubectl, directory: string): Promise<string> {
  return must(kubectl, ["kustomize", directory]);
}

/** The objects of a YAML stream. */
export function objectsOf(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

/** A Secret of `data` (plain text values) as an operator creates it: `kubectl apply`. */
export async function applySecret(
  kubectl: Kubectl,
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type: "Opaque",
    stringData: data,
  };
  await must(kubectl, ["apply", "-f", "-"], stringify(secret));
}
