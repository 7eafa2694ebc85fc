/**
 * Judges a rendered tree by what its readers make of it (issue #21): every haproxy.cfg, hosts.ini,
 * ssh_config and authorized_keys goes to its program (./readers.ts), Dex's config to Dex
 * (./judge-auth.ts, issue #39), the hosts table to a JSON parser,
 * the Software line files are split as `read -r` splits them, and every YAML file must parse and its
 * objects validate, and read the same to kubectl (YAML 1.1, issue #35) as to the YAML 1.2 reader;
 * each reading is compared with what the site asked for ({@link plannedReadings}). The answer is a
 * sorted list of problems, empty when every reader agrees.
 */
import { parseAllDocuments } from "yaml";
import { asKubeObject, validateKubernetesObject, type KubeObject } from "./charts.ts";
import { judgeAuth } from "./judge-auth.ts";
import {
  ansibleInventory,
  expectedKeyListing,
  haproxyBackends,
  kubectlObjects,
  sshConfigFor,
  withoutEmptyLabels,
  sshKeygenList,
  type HaproxyBackend,
} from "./readers.ts";
import { plannedReadings, type SiteValues } from "./trust-site.ts";

/** A host name no ssh_config entry of a site names: only `Host *` may apply to it. */
const UNLISTED_HOST = "unlisted-host.invalid";

/**
 * The problems the readers find in `files` (a rendered tree, relative path → text) for a site of
 * `values`, each a sentence naming the file; scratch files go under `dir`.
 */
export async function judgeRendered(
  values: SiteValues,
  files: ReadonlyMap<string, string>,
  dir: string,
): Promise<string[]> {
  const planned = plannedReadings(values);
  const problems: string[] = [];
  const objects = new Map<string, KubeObject[]>();
  /** Every document of every YAML file, as the YAML 1.2 reader reads it, for kubectl's reading. */
  const read: { file: string; value: unknown }[] = [];
  for (const [file, text] of files) {
    if (!file.endsWith(".yaml")) continue;
    const documents = parseAllDocuments(text);
    const values: unknown[] = [];
    for (const document of Array.isArray(documents) ? documents : [documents]) {
      if (document.errors.length > 0)
        problems.push(`${shown(file)}: YAML does not parse: ${document.errors[0]!.message}`);
      else values.push(document.toJS());
    }
    read.push(...values.filter((value) => value !== null).map((value) => ({ file, value })));
    // The component files of a cluster hold Kubernetes objects; the lock and kustomization.yaml don't.
    if (!/^clusters\/[^]*\/(?!kustomization\.yaml$)[^/]+$/.test(file)) continue;
    const parsed: KubeObject[] = [];
    for (const value of values) {
      try {
        const object = asKubeObject(value);
        validateKubernetesObject(object);
        problems.push(...referenceProblems(object).map((problem) => `${shown(file)}: ${problem}`));
        parsed.push(object);
      } catch (error) {
        problems.push(`${shown(file)}: not a valid Kubernetes object: ${String(error)}`);
      }
    }
    objects.set(file, parsed);
  }
  const configData = (file: string): Record<string, string> | undefined => {
    const found = objects.get(file)?.find((object) => object.kind === "ConfigMap");
    if (!found) problems.push(`${shown(file)}: missing, or without a ConfigMap`);
    return found?.["data"] as Record<string, string> | undefined;
  };

  const sip = planned.sipDirectory;
  await Promise.all([
    judgeHaproxy(`${sip}/loadbalancer-controlplane.yaml`, planned.controlPlaneBackends),
    judgeHaproxy(`${sip}/loadbalancer-worker.yaml`, planned.workerBackends),
    judgeJumpHost(`${sip}/jumphost.yaml`),
    judgeInstaller(`${planned.bpaDirectory}/kud-installer.yaml`),
    judgeYaml11(),
    (async () => {
      const file = `${sip}/auth.yaml`;
      const text = files.get(file);
      if (text === undefined) return void problems.push(`${shown(file)}: missing`);
      problems.push(...(await judgeAuth(shown(file), text, planned.auth, dir)));
    })(),
  ]);
  judgeSoftware(`${planned.bpaDirectory}/software.yaml`);
  for (const [name, image] of Object.entries(planned.images)) {
    const deployment = objects.get(`${sip}/${name}`)?.find((object) => object.kind === "Deployment");
    const found = containers(deployment).map((container) => container["image"]);
    if (found.length !== 1 || found[0] !== image)
      problems.push(
        `${shown(`${sip}/${name}`)}: Deployment image ${JSON.stringify(found)}, planned ${JSON.stringify(image)}`,
      );
  }
  return problems.sort();

  async function judgeHaproxy(file: string, backends: ReadonlyMap<string, ReadonlyMap<string, string>>) {
    const config = configData(file)?.["haproxy.cfg"];
    if (config === undefined) return void problems.push(`${shown(file)}: no haproxy.cfg`);
    const reading = await haproxyBackends(config, dir);
    if (!reading.ok) return void problems.push(`${shown(file)}: haproxy refuses haproxy.cfg: ${reading.why}`);
    const found = describeBackends(reading.backends);
    const wanted = describeBackends(
      [...backends].map(([name, servers]) => ({
        name,
        servers: [...servers].map(([server, address]) => ({ name: server, address })),
      })),
    );
    if (found !== wanted) problems.push(`${shown(file)}: haproxy reads backends ${found}, planned ${wanted}`);
  }

  async function judgeJumpHost(file: string) {
    const data = configData(file);
    if (!data) return;
    const hosts = planned.sshHosts;
    const config = data["ssh_config"] ?? "";
    const readings = await sshConfigFor(config, [UNLISTED_HOST, ...hosts.map((host) => host.name)], dir);
    const unlisted = readings.get(UNLISTED_HOST);
    if (!unlisted?.ok)
      problems.push(
        `${shown(file)}: ssh -G refuses ssh_config: ${unlisted?.ok === false ? unlisted.why : ""}`,
      );
    else {
      if (unlisted.options["hostname"]?.join() !== UNLISTED_HOST)
        problems.push(
          `${shown(file)}: ssh_config sends a host it does not list to ${JSON.stringify(unlisted.options["hostname"])}`,
        );
      const common = beyondAddress(unlisted.options);
      for (const host of hosts) {
        const reading = readings.get(host.name);
        if (!reading?.ok) continue;
        const hostName = reading.options["hostname"]?.join();
        if (canonicalAddress(hostName ?? "") !== canonicalAddress(host.ip))
          problems.push(
            `${shown(file)}: ssh -G ${JSON.stringify(host.name)} connects to ${JSON.stringify(hostName)}, planned ${JSON.stringify(host.ip)}`,
          );
        const rest = beyondAddress(reading.options);
        if (rest !== common)
          problems.push(
            `${shown(file)}: ssh_config sets more for ${JSON.stringify(host.name)} than its address: ${rest}`,
          );
      }
    }
    const keys = data["authorized_keys"] ?? "";
    const keyLines = keys.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));
    if (keyLines.length !== planned.authorizedKeys.length)
      problems.push(
        `${shown(file)}: authorized_keys has ${keyLines.length} key lines for ${planned.authorizedKeys.length} sshAuthorizedKeys entries`,
      );
    const listing = await sshKeygenList(keys, dir);
    if (!listing.ok) problems.push(`${shown(file)}: ssh-keygen refuses authorized_keys: ${listing.why}`);
    else {
      const found = JSON.stringify(listing.keys);
      const wanted = JSON.stringify(planned.authorizedKeys.map(expectedKeyListing));
      if (found !== wanted) problems.push(`${shown(file)}: ssh-keygen -l lists ${found}, planned ${wanted}`);
    }
    let table: unknown;
    try {
      table = JSON.parse(data["hosts"] ?? "");
    } catch (error) {
      return void problems.push(`${shown(file)}: the hosts table is not JSON: ${String(error)}`);
    }
    const rows = Array.isArray(table)
      ? table.map((row: Record<string, unknown>) => ({
          name: row["name"],
          ip: row["ip"],
          bmc: (row["bmc"] as Record<string, unknown> | undefined)?.["address"],
        }))
      : table;
    const wanted = [...hosts]
      .map((host) => ({ name: host.name, ip: host.ip, bmc: host.bmc }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (JSON.stringify(rows) !== JSON.stringify(wanted))
      problems.push(
        `${shown(file)}: the hosts table lists ${JSON.stringify(rows)}, planned ${JSON.stringify(wanted)}`,
      );
  }

  async function judgeInstaller(file: string) {
    const ini = configData(file)?.["hosts.ini"];
    if (ini === undefined) return void problems.push(`${shown(file)}: no hosts.ini`);
    const reading = await ansibleInventory(ini, dir);
    if (!reading.ok)
      return void problems.push(`${shown(file)}: ansible-inventory refuses hosts.ini: ${reading.why}`);
    const { hosts, children, hostvars } = reading.inventory;
    const found = JSON.stringify(sortedEntries(hosts));
    const wanted = JSON.stringify(sortedEntries(planned.groups));
    if (found !== wanted)
      problems.push(`${shown(file)}: ansible-inventory reads groups ${found}, planned ${wanted}`);
    const clusterChildren = JSON.stringify(children["k8s-cluster"]);
    if (clusterChildren !== JSON.stringify(["kube-node", "kube-master"]))
      problems.push(`${shown(file)}: ansible-inventory reads k8s-cluster's children as ${clusterChildren}`);
    const vars = JSON.stringify(sortedEntries(hostvars));
    const wantedVars = JSON.stringify(
      sortedEntries(
        Object.fromEntries(
          Object.entries(planned.nodeAddresses).map(([label, ip]) => [
            label,
            { ansible_ssh_host: ip, ansible_ssh_port: 22 },
          ]),
        ),
      ),
    );
    if (vars !== wantedVars)
      problems.push(`${shown(file)}: ansible-inventory reads host variables ${vars}, planned ${wantedVars}`);
    const job = objects.get(file)?.find((object) => object.kind === "Job");
    const installer = containers(job).find(
      (container) => JSON.stringify(container["command"]) === '["./installer"]',
    );
    const args = JSON.stringify(installer?.["args"]);
    const wantedArgs = JSON.stringify([
      "--cluster",
      values.cluster,
      "--plugins",
      ...planned.kudPlugins,
      "--network",
      "10.244.64.0/18",
    ]);
    if (args !== wantedArgs)
      problems.push(`${shown(file)}: the installer runs with ${args}, planned ${wantedArgs}`);
    if (installer?.["image"] !== values.kudInstallerImage)
      problems.push(
        `${shown(file)}: the installer image is ${String(installer?.["image"])}, planned ${values.kudInstallerImage}`,
      );
  }

  /**
   * kubectl reads every YAML file in one run; each object must come back as the YAML 1.2 reader read
   * it, and the CRs of each `specs.yaml` with the labels and annotations the site gave them.
   */
  async function judgeYaml11() {
    const yaml = [...files].filter(([file]) => file.endsWith(".yaml"));
    const reading = await kubectlObjects(yaml, dir);
    if (!reading.ok) return void problems.push(`kubectl refuses the rendered YAML: ${reading.why}`);
    if (reading.objects.length !== read.length)
      return void problems.push(
        `kubectl reads ${reading.objects.length} objects in the rendered YAML, the YAML 1.2 reader ${read.length}`,
      );
    const byKubectl = new Map<string, unknown[]>();
    read.forEach(({ file, value }, index) => {
      const object = reading.objects[index];
      const difference = firstDifference(withoutEmptyLabels(object), withoutEmptyLabels(value));
      if (difference !== undefined)
        problems.push(
          `${shown(file)}: kubectl (YAML 1.1) reads ${difference}, the YAML 1.2 reader otherwise`,
        );
      byKubectl.set(file, [...(byKubectl.get(file) ?? []), object]);
    });
    for (const [directory, kind] of [
      [planned.sipDirectory, "SIPCluster"],
      [planned.bpaDirectory, "Provisioning"],
    ] as const) {
      const file = `${directory}/specs.yaml`;
      const cr = byKubectl.get(file)?.find((object) => isRecord(object) && object["kind"] === kind);
      const metadata = isRecord(cr) && isRecord(cr["metadata"]) ? cr["metadata"] : {};
      for (const [field, wanted] of [
        ["labels", planned.crLabels],
        ["annotations", planned.crAnnotations],
      ] as const) {
        const found = isRecord(metadata[field]) ? metadata[field] : {};
        for (const [key, value] of Object.entries(wanted)) {
          if (found[key] !== value)
            problems.push(
              `${shown(file)}: kubectl reads ${kind} ${field}[${JSON.stringify(key)}] as ${JSON.stringify(found[key])}, planned ${JSON.stringify(value)}`,
            );
        }
      }
    }
  }

  function judgeSoftware(file: string) {
    const data = configData(file);
    if (!data) return;
    for (const [key, lines] of Object.entries(planned.softwareLines)) {
      // `while IFS= read -r line`: one item per line, a last line without newline included.
      const read = (data[key] ?? "").split("\n");
      if (read.at(-1) === "") read.pop();
      if (JSON.stringify(read) !== JSON.stringify(lines))
        problems.push(
          `${shown(file)}: ${key} reads as ${JSON.stringify(read)}, planned ${JSON.stringify(lines)}`,
        );
    }
  }
}

/**
 * The object names and image references of an object that the API server or the container runtime
 * would refuse: `metadata.name` (a DNS-1123 subdomain), `metadata.namespace` (a DNS-1123 label), the
 * Secret and ConfigMap names its pod's volumes mount (subdomains), and its containers' images (the
 * reference grammar of distribution/reference, which containerd and CRI-O parse images with).
 */
function referenceProblems(object: KubeObject): string[] {
  const problems: string[] = [];
  const what = `${object.kind}/${JSON.stringify(object.metadata.name)}`;
  if (!isDnsSubdomain(object.metadata.name)) problems.push(`${what}: the name is not a DNS-1123 subdomain`);
  const namespace = object.metadata.namespace;
  if (namespace !== undefined && !DNS_LABEL.test(namespace))
    problems.push(`${what}: namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`);
  const pod = podSpec(object);
  const volumes = Array.isArray(pod?.["volumes"]) ? (pod["volumes"] as Record<string, unknown>[]) : [];
  const mounted = volumes.flatMap((volume) => {
    const secret = volume["secret"] as { secretName?: unknown } | undefined;
    const configMap = volume["configMap"] as { name?: unknown } | undefined;
    const projected = volume["projected"] as { sources?: { secret?: { name?: unknown } }[] } | undefined;
    return [
      secret?.secretName,
      configMap?.name,
      ...(projected?.sources ?? []).map((source) => source.secret?.name),
    ];
  });
  for (const name of mounted.filter((name) => name !== undefined)) {
    if (typeof name !== "string" || !isDnsSubdomain(name))
      problems.push(`${what}: mounts ${JSON.stringify(name)}, which is not a DNS-1123 subdomain`);
  }
  for (const container of containers(object)) {
    const image = container["image"];
    if (typeof image !== "string" || !IMAGE_REFERENCE.test(image))
      problems.push(`${what}: image ${JSON.stringify(image)} is not an image reference`);
  }
  return problems;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Kubernetes' IsDNS1123Subdomain: labels of any length, at most 253 in all. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isDnsSubdomain(text: string): boolean {
  return text.length <= 253 && DNS_SUBDOMAIN.test(text);
}

/** distribution/reference's grammar: `[domain[:port]/]path[:tag][@digest]`, path lowercase. */
const IMAGE_REFERENCE = (() => {
  const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
  const domain = `${domainComponent}(?:\\.${domainComponent})*(?::[0-9]+)?`;
  const pathComponent = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
  const name = `(?:${domain}/)?${pathComponent}(?:/${pathComponent})*`;
  const tag = "[\\w][\\w.-]{0,127}";
  const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
  return new RegExp(`^${name}(?::${tag})?(?:@${digest})?$`);
})();

/** `text` as it is when it is all visible ASCII, JSON-quoted otherwise (newlines, controls, spaces). */
function shown(text: string): string {
  return /^[\x21-\x7e]*$/.test(text) ? text : JSON.stringify(text);
}

/** The pod spec of a Deployment or Job. */
function podSpec(object: KubeObject | undefined): Record<string, unknown> | undefined {
  return (object?.["spec"] as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
}

/** The containers of a Deployment or Job, init containers first. */
function containers(object: KubeObject | undefined): Record<string, unknown>[] {
  const spec = (object?.["spec"] as { template?: { spec?: Record<string, unknown> } } | undefined)?.template
    ?.spec;
  return [...((spec?.["initContainers"] as []) ?? []), ...((spec?.["containers"] as []) ?? [])];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where `a` and `b` first differ, as `<path>: <a>` (JSON values, maps in any key order), or `undefined`. */
function firstDifference(a: unknown, b: unknown, at = ""): string | undefined {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at || "."}: ${a.length} items`;
    for (let index = 0; index < a.length; index++) {
      const found = firstDifference(a[index], b[index], `${at}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (isRecord(a) && isRecord(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const found = firstDifference(a[key], b[key], `${at}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return Object.is(a, b) ? undefined : `${at || "."}: ${JSON.stringify(a) ?? "nothing"}`;
}

/** Backends as one comparable line: `backend[server=address,…]` sorted, addresses canonical. */
function describeBackends(backends: readonly HaproxyBackend[]): string {
  return backends
    .map((backend) => {
      const servers = backend.servers
        .map((server) => `${server.name}=${canonicalServerAddress(server.address)}`)
        .sort();
      return `${backend.name}[${servers.join(",")}]`;
    })
    .sort()
    .join(" ");
}

/** `address:port` with an IPv6 address in its canonical form (HAProxy prints it so). */
function canonicalServerAddress(text: string): string {
  const colon = text.lastIndexOf(":");
  return colon < 0 ? text : `${canonicalAddress(text.slice(0, colon))}:${text.slice(colon + 1)}`;
}

/**
 * An IPv6 address in its shortest lowercase form (as HAProxy and ssh print them); any other text as
 * it is. Only a string with two colons or more is taken for IPv6, and only if the URL parser takes it.
 */
function canonicalAddress(text: string): string {
  if ((text.match(/:/g) ?? []).length < 2) return text;
  try {
    const host = new URL(`http://[${text}]/`).hostname;
    return host.slice(1, -1);
  } catch {
    return text;
  }
}

/** `ssh -G` options but the host and its address, as one line of `option=values` sorted. */
function beyondAddress(options: Readonly<Record<string, readonly string[]>>): string {
  return Object.entries(options)
    .filter(([key]) => key !== "host" && key !== "hostname")
    .map(([key, values]) => `${key}=${values.join("|")}`)
    .sort()
    .join("; ");
}

function sortedEntries<T>(record: Readonly<Record<string, T>>): [string, T][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
