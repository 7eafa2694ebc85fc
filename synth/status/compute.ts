/**
 * The status of each CR (docs/contract.md §5, decision 0059), computed from what the cluster holds:
 * the site evaluated against the live inventory with Git's Allocations as the lock (the webhook's
 * rules, the same code), the Allocations themselves (which host serves which node: Git's decision,
 * never a re-plan), the Jobs metalsynth rendered, and the GitOps agent object that applied the CR.
 * Pure: every input is a parameter, the time included, so the same cluster gives the same status.
 */
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import { ipForInterface } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { compareText, type Issue } from "../issue.ts";
import { sameData } from "../same-data.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import type { ClusterPlan, SipClusterPlan, SitePlan } from "../plan/model.ts";
import type { Condition, CrStatus, GitOpsStatus, HostStatus, JobStatus } from "../schema/status.ts";
import {
  agentRefOf,
  oneLineShort,
  type AgentView,
  type CrView,
  type JobComponent,
  type JobView,
  jobNameStem,
} from "./objects.ts";

/** The field manager of every status write: the reporter owns `.status` and nothing else. */
export const STATUS_FIELD_MANAGER = "metalsynth-status";

/** Everything the statuses are computed from, read once per round. */
export interface StatusFacts {
  /** Every finding about the site's CRs: the evaluation's, and each CR's own reading (schema). */
  readonly issues: readonly Issue[];
  /** What is wrong with the Allocations (each finding's `object` is `Allocation/<ns>/<name>`). */
  readonly lockIssues: readonly Issue[];
  /** The evaluation's plan: which CRs make which cluster, and each node's address. */
  readonly plan: SitePlan;
  readonly inventory: Inventory;
  /** Git's lock as the Allocations hold it. */
  readonly lock: Lock;
  /** The clusters (`namespace/name`) that have an Allocation object, even an empty one. */
  readonly allocations: ReadonlySet<string>;
  readonly jobs: readonly JobView[];
  readonly agents: readonly AgentView[];
}

/** A condition that changed status or reason: what an Event tells. */
export interface Transition {
  readonly type: string;
  /** `Warning` when something failed, `Normal` otherwise. */
  readonly eventType: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** One CR's status, and what changed since the status it has. */
export interface StatusOutcome {
  readonly status: CrStatus;
  /** The cluster's name (`cluster` label, SIPCluster name), for metrics; `""` when it has none. */
  readonly cluster: string;
  readonly ready: boolean;
  readonly transitions: readonly Transition[];
  /** Whether `status` differs from the CR's current status: only then is it written. */
  readonly changed: boolean;
}

/** Reasons of a condition that is False because something is under way, not because it failed. */
const UNDER_WAY = new Set(["NotAllocated", "Applying", "JobNotFound", "JobPending", "JobRunning"]);

/** Findings named in a condition's message; the rest are counted. */
const SHOWN_FINDINGS = 3;
/** Longest condition message the reporter writes. */
const MAX_MESSAGE = 4096;

/** The facts indexed for looking up one CR's part (built once per round, O(facts)). */
export class StatusIndex {
  readonly facts: StatusFacts;
  readonly #issues = new Map<string, Issue[]>();
  readonly #entries = new Map<string, LockEntry[]>();
  readonly #clusters = new Map<string, ClusterPlan>();
  readonly #jobs = new Map<string, JobView>();
  readonly #agents = new Map<string, AgentView>();
  readonly #agentsByName = new Map<string, AgentView[]>();

  constructor(facts: StatusFacts) {
    this.facts = facts;
    for (const found of [...facts.issues, ...facts.lockIssues]) {
      if (found.object === undefined) continue;
      const list = this.#issues.get(found.object) ?? [];
      list.push(found);
      this.#issues.set(found.object, list);
    }
    for (const entry of facts.lock.entries) {
      const list = this.#entries.get(entry.cluster) ?? [];
      list.push(entry);
      this.#entries.set(entry.cluster, list);
    }
    for (const cluster of facts.plan.clusters) {
      const resources =
        cluster.kind === "sip"
          ? [cluster.sip.resource]
          : [cluster.provisioning?.resource, cluster.software?.resource, cluster.glue?.resource];
      for (const resource of resources) if (resource) this.#clusters.set(resource.key, cluster);
    }
    for (const job of facts.jobs) {
      const key = jobKey(job.namespace, job.cluster, job.component);
      const known = this.#jobs.get(key);
      // The latest Job is the current one: a new hash is a new Job, and an old one may linger.
      if (
        known === undefined ||
        compareText(known.created, job.created) < 0 ||
        (known.created === job.created && compareText(known.name, job.name) < 0)
      )
        this.#jobs.set(key, job);
    }
    for (const agent of facts.agents) {
      this.#agents.set(`${agent.kind}/${agent.namespace}/${agent.name}`, agent);
      const named = this.#agentsByName.get(`${agent.kind}/${agent.name}`) ?? [];
      named.push(agent);
      this.#agentsByName.set(`${agent.kind}/${agent.name}`, named);
    }
  }

  /** The findings about object `key` (`Kind/namespace/name`). */
  issuesOf(key: string): readonly Issue[] {
    return this.#issues.get(key) ?? [];
  }

  /** Git's lock entries of cluster `key`. */
  entriesOf(key: string): readonly LockEntry[] {
    return this.#entries.get(key) ?? [];
  }

  /** The plan of the cluster CR `key` belongs to, when the evaluation placed it in one. */
  clusterOf(key: string): ClusterPlan | undefined {
    return this.#clusters.get(key);
  }

  /** The current Job of `component` for cluster `name` in `namespace`. */
  jobOf(namespace: string, name: string, component: JobComponent): JobView | undefined {
    return this.#jobs.get(jobKey(namespace, name, component));
  }

  /** The agent object `ref` names; by name alone when the ref has no namespace and one object has it. */
  agent(ref: { kind: string; namespace?: string; name: string }): AgentView | undefined {
    if (ref.namespace !== undefined) return this.#agents.get(`${ref.kind}/${ref.namespace}/${ref.name}`);
    const named = this.#agentsByName.get(`${ref.kind}/${ref.name}`) ?? [];
    return named.length === 1 ? named[0] : undefined;
  }
}

function jobKey(namespace: string, cluster: string, component: JobComponent): string {
  return `${namespace}/${cluster}/${component}`;
}

/** A condition before its time and generation are set. */
interface Found {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  readonly reason: string;
  readonly message: string;
}

/**
 * The status `cr` should have at `now` (RFC 3339), against the facts of `index`. A condition keeps
 * its `lastTransitionTime` while its status stays; a transition is a change of status or reason
 * (a Job that was running and failed is one), and a condition seen for the first time is one only
 * when it fails, so a reporter starting on a healthy hub tells nothing.
 */
export function crStatus(cr: CrView, index: StatusIndex, now: string): StatusOutcome {
  const plan = index.clusterOf(cr.key);
  const clusterName = plan?.name ?? (cr.kind === "SIPCluster" ? cr.name : cr.labels.cluster);
  const cluster = clusterName === undefined ? undefined : clusterKey(cr.namespace, clusterName);
  const found: Found[] = [valid(cr, index, cluster)];
  const hosts = cluster === undefined ? undefined : allocatedHosts(cluster, plan, index);
  found.push(hostsAllocated(cr, cluster, plan, hosts, index));
  const agent = applied(cr, index);
  found.push(agent.condition);
  const jobs: JobStatus[] = [];
  for (const [type, component] of jobConditions(cr, plan)) {
    const outcome = jobCondition(type, component, cr.namespace, clusterName, index, hosts, cluster);
    found.push(outcome.condition);
    if (outcome.job) jobs.push(outcome.job);
  }
  found.push(ready(found));

  const previous = new Map(cr.conditions.map((condition) => [condition.type, condition]));
  const transitions: Transition[] = [];
  const conditions: Condition[] = found.map((condition) => {
    const before = previous.get(condition.type);
    const changed =
      before === undefined || before.status !== condition.status || before.reason !== condition.reason;
    if (changed && isTold(condition, before)) {
      transitions.push({
        type: condition.type,
        eventType: condition.status === "False" && !UNDER_WAY.has(condition.reason) ? "Warning" : "Normal",
        reason: condition.reason,
        message: `${condition.type} ${condition.status}: ${condition.message}`,
      });
    }
    return {
      type: condition.type,
      status: condition.status,
      observedGeneration: cr.generation,
      lastTransitionTime:
        before !== undefined && before.status === condition.status ? before.lastTransitionTime : now,
      reason: condition.reason,
      message: bounded(condition.message),
    };
  });
  const status: CrStatus = {
    observedGeneration: cr.generation,
    conditions,
    ...(hosts && {
      hostSummary: `${hosts.filter((host) => host.present).length}/${hosts.length}`,
      hosts,
    }),
    ...(agent.gitops && { gitops: agent.gitops }),
    ...(jobs.length > 0 && { jobs }),
  };
  return {
    status,
    cluster: clusterName ?? "",
    ready: found.at(-1)?.status === "True",
    transitions,
    changed: !sameData(cr.status, status),
  };
}

/**
 * Whether a changed condition is told by an Event. `Ready` is told when it turns True or stops
 * being True (the condition that made it is told by its own Event), never when first seen; any other
 * condition seen for the first time only when it fails.
 */
function isTold(condition: Found, before: Condition | undefined): boolean {
  if (condition.type === "Ready")
    return before !== undefined && (before.status === "True") !== (condition.status === "True");
  if (before === undefined) return condition.status === "False" && !UNDER_WAY.has(condition.reason);
  return true;
}

/** `Valid`: the site's rules on this CR, against the live inventory and Git's Allocations. */
function valid(cr: CrView, index: StatusIndex, cluster: ClusterKey | undefined): Found {
  const own = index.issuesOf(cr.key);
  const damage = cluster === undefined ? [] : index.issuesOf(`Allocation/${cluster}`);
  const errors = [...own, ...damage].filter((found) => found.severity === "error").sort(byPath);
  const warnings = own.filter((found) => found.severity === "warning").sort(byPath);
  const first = errors[0];
  if (first === undefined) {
    const warned = warnings[0];
    const note =
      warned === undefined
        ? ""
        : ` (${warnings.length} warning${warnings.length === 1 ? "" : "s"}: ${findingText(warned)} [${warned.rule}]${warnings.length > 1 ? " …" : ""})`;
    return {
      type: "Valid",
      status: "True",
      reason: "Valid",
      // No count of hosts here: one host more would change every CR's status.
      message: `no rule finds an error against the live inventory${note}`,
    };
  }
  const shown = errors.slice(0, SHOWN_FINDINGS).map((found) => `${findingText(found)} [${found.rule}]`);
  const more = errors.length - shown.length;
  return {
    type: "Valid",
    status: "False",
    reason: first.rule,
    message: `${shown.join("; ")}${more > 0 ? `; ${more} more (metalsynth validate lists them)` : ""}`,
  };
}

function findingText(found: Issue): string {
  return oneLineShort(found.path === "" ? found.message : `${found.path}: ${found.message}`);
}

function byPath(a: Issue, b: Issue): number {
  return compareText(a.path, b.path) || compareText(a.rule, b.rule) || compareText(a.message, b.message);
}

/** The hosts Git allocated to `cluster` (its Allocation's entries, released ones left out). */
function allocatedHosts(
  cluster: ClusterKey,
  plan: ClusterPlan | undefined,
  index: StatusIndex,
): HostStatus[] {
  const { inventory } = index.facts;
  return index
    .entriesOf(cluster)
    .filter((entry) => entry.released !== true)
    .map((entry) => {
      const host = inventory.byId(entry.host);
      const address = host === undefined ? undefined : addressOf(entry, plan);
      return {
        host: entry.host,
        role: entry.role,
        ...(entry.node === undefined ? {} : { node: entry.node }),
        ...(entry.standby === true ? { standby: true } : {}),
        ...(address === undefined ? {} : { address }),
        present: host !== undefined,
      };
    });
}

/**
 * Where the rendered files reach a host: a BPA node's hosts.ini address as the plan placed it on that
 * host, or a SIP member's address on the interface its role's load balancer targets.
 */
function addressOf(entry: LockEntry, plan: ClusterPlan | undefined): string | undefined {
  if (plan === undefined) return undefined;
  if (plan.kind === "bpa") {
    if (entry.kind !== "bpa") return undefined;
    const placement = [...plan.masters, ...plan.workers].find(
      (candidate) =>
        candidate.host.id === entry.host &&
        candidate.request.label === entry.node &&
        candidate.request.role === entry.role,
    );
    return placement?.ip;
  }
  const member = plan.members.find((candidate) => candidate.host.id === entry.host);
  const interfaceId = sipInterface(plan, entry.role);
  return member === undefined || interfaceId === undefined
    ? undefined
    : ipForInterface(member.host, interfaceId);
}

/** The interface a SIP role's load balancer targets; the jump host's for other roles. */
function sipInterface(plan: SipClusterPlan, role: string): string | undefined {
  const services = plan.sip.services;
  const balancer =
    role === "ControlPlane"
      ? services.loadBalancerControlPlane
      : role === "Worker"
        ? services.loadBalancerWorker
        : undefined;
  return balancer?.[0]?.nodeInterfaceId ?? services.jumpHost?.[0]?.nodeInterfaceId;
}

/** `HostsAllocated`: Git gave the cluster a host for every node it asks for, and each is in the inventory. */
function hostsAllocated(
  cr: CrView,
  cluster: ClusterKey | undefined,
  plan: ClusterPlan | undefined,
  hosts: readonly HostStatus[] | undefined,
  index: StatusIndex,
): Found {
  const type = "HostsAllocated";
  if (cluster === undefined || hosts === undefined)
    return {
      type,
      status: "Unknown",
      reason: "NoCluster",
      message: "the object names no cluster (a BPA CR's `cluster` label)",
    };
  const damage = index.issuesOf(`Allocation/${cluster}`).filter((found) => found.severity === "error");
  const damaged = damage[0];
  if (damaged !== undefined)
    return {
      type,
      status: "False",
      reason: damaged.rule,
      message: `Allocation ${cluster} is damaged: ${findingText(damaged)}`,
    };
  if (!index.facts.allocations.has(cluster))
    return {
      type,
      status: "False",
      reason: "NotAllocated",
      message: `no Allocation ${cluster}: Git has not allocated hosts to this cluster yet (metalsynth commit renders it, the GitOps agent applies it)`,
    };
  const missing = unallocated(plan, hosts);
  if (missing.length > 0)
    return {
      type,
      status: "False",
      reason: "NotAllocated",
      message: `Git's Allocation ${cluster} has no host for ${missing.join(", ")} yet: render and commit the site`,
    };
  const vanished = hosts.filter((host) => !host.present);
  if (vanished.length > 0)
    return {
      type,
      status: "False",
      reason: "host-vanished",
      message: `${vanished.map((host) => `${host.host} (${host.node ?? host.role})`).join(", ")} not in the inventory: ${vanished.length === 1 ? "its node stays on it" : "their nodes stay on them"} until \`metalsynth release ${vanished.map((host) => host.host).join(" ")}\``,
    };
  const roles = new Map<string, number>();
  for (const host of hosts) roles.set(host.role, (roles.get(host.role) ?? 0) + 1);
  return {
    type,
    status: "True",
    reason: "Allocated",
    message: `${hosts.length} host${hosts.length === 1 ? "" : "s"} in the inventory (${[...roles].map(([role, count]) => `${count} ${role}`).join(", ")})`,
  };
}

/** The nodes (BPA) or role counts (SIP) the cluster's CRs ask for and its Allocation lacks. */
function unallocated(plan: ClusterPlan | undefined, hosts: readonly HostStatus[]): string[] {
  if (plan === undefined) return [];
  if (plan.kind === "bpa") {
    const provisioning = plan.provisioning;
    if (provisioning === undefined) return [];
    const have = new Set(hosts.map((host) => `${host.role}/${host.node ?? ""}`));
    return [...provisioning.masters, ...provisioning.workers]
      .filter((request) => !have.has(`${request.role}/${request.label}`))
      .map((request) => `${request.role} ${request.label}`);
  }
  return plan.sip.roles.flatMap((role) => {
    const wanted = role.active + role.standby;
    const have = hosts.filter((host) => host.role === role.role).length;
    return have < wanted ? [`${role.role} (${have} of ${wanted} hosts)`] : [];
  });
}

/** `Applied`: the GitOps agent that applied the CR has applied the revision it holds. */
function applied(cr: CrView, index: StatusIndex): { condition: Found; gitops?: GitOpsStatus } {
  const type = "Applied";
  const ref = agentRefOf(cr);
  if (ref === undefined)
    return {
      condition: {
        type,
        status: "Unknown",
        reason: "NoGitOpsAgent",
        message: "no Flux or Argo CD marks on the object: it was not applied by a GitOps agent",
      },
    };
  const agent = index.agent(ref);
  const where = `${ref.namespace === undefined ? "" : `${ref.namespace}/`}${ref.name}`;
  if (agent === undefined)
    return {
      condition: {
        type,
        status: "Unknown",
        reason: "AgentNotFound",
        message: `${ref.kind === "Kustomization" ? "Flux Kustomization" : "Argo CD Application"} ${where}, which applied the object, is not in the cluster (or not readable)`,
      },
      gitops: {
        kind: ref.kind,
        ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }),
        name: ref.name,
      },
    };
  return {
    condition: { type, status: agent.applied, reason: agent.reason, message: agent.message },
    gitops: {
      kind: agent.kind,
      namespace: agent.namespace,
      name: agent.name,
      ...(agent.revision === undefined ? {} : { revision: agent.revision }),
    },
  };
}

/** The Job conditions of each kind: which condition tells which component's Job. */
function jobConditions(cr: CrView, plan: ClusterPlan | undefined): [string, JobComponent][] {
  switch (cr.kind) {
    case "Provisioning":
      return [["KudInstalled", "kud"]];
    case "Software":
      return [["SoftwareInstalled", "software"]];
    case "Cluster":
      return plan?.kind === "bpa" && plan.software !== undefined
        ? [
            ["KudInstalled", "kud"],
            ["SoftwareInstalled", "software"],
          ]
        : [["KudInstalled", "kud"]];
    case "SIPCluster":
      return [["HostsLabelled", "labels"]];
  }
}

const COMPONENT_WORDS: Record<JobComponent, string> = {
  kud: "KUD installer",
  software: "Software installer",
  labels: "BMH label",
};

/** A Job condition: the component's current Job succeeded, failed, runs or is still to come. */
function jobCondition(
  type: string,
  component: JobComponent,
  namespace: string,
  clusterName: string | undefined,
  index: StatusIndex,
  hosts: readonly HostStatus[] | undefined,
  cluster: ClusterKey | undefined,
): { condition: Found; job?: JobStatus } {
  const job = clusterName === undefined ? undefined : index.jobOf(namespace, clusterName, component);
  const words = COMPONENT_WORDS[component];
  const stem = clusterName === undefined ? `${component}-…` : `${jobNameStem(component, clusterName)}…`;
  if (job === undefined) {
    const labelled = component === "labels" ? sipLabelled(cluster, hosts, index) : undefined;
    if (labelled?.done)
      return { condition: { type, status: "True", reason: "HostsLabelled", message: labelled.message } };
    return {
      condition: {
        type,
        status: "False",
        reason: "JobNotFound",
        message: `no ${words} Job (${stem}) in ${namespace} yet: the GitOps agent creates it when it applies the cluster's directory${labelled ? `; ${labelled.message}` : ""}`,
      },
    };
  }
  const logs = `kubectl logs -n ${job.namespace} job/${job.name}`;
  const status: JobStatus = {
    name: job.name,
    component,
    phase: job.phase,
    ...(job.reason === undefined ? {} : { reason: job.reason }),
    ...(job.startTime === undefined ? {} : { startTime: job.startTime }),
    ...(job.completionTime === undefined ? {} : { completionTime: job.completionTime }),
    logs,
  };
  const named = `Job ${job.namespace}/${job.name}`;
  switch (job.phase) {
    case "Pending":
      return {
        condition: {
          type,
          status: "False",
          reason: "JobPending",
          message: `${named} is created; no pod has started yet`,
        },
        job: status,
      };
    case "Running":
      return {
        condition: {
          type,
          status: "False",
          reason: "JobRunning",
          message: `${named} is running; follow it: ${logs} -f`,
        },
        job: status,
      };
    case "Failed": {
      const why = [job.reason, job.message === undefined ? undefined : oneLineShort(job.message)]
        .filter(Boolean)
        .join(": ");
      return {
        condition: {
          type,
          status: "False",
          reason: "JobFailed",
          message: `${named} failed${why ? ` (${why})` : ""}; its logs: ${logs}`,
        },
        job: status,
      };
    }
    case "Succeeded": {
      const at = job.completionTime === undefined ? "" : ` at ${job.completionTime}`;
      if (component === "labels") {
        const labelled = sipLabelled(cluster, hosts, index);
        if (labelled && !labelled.done)
          return {
            condition: {
              type,
              status: "False",
              reason: "LabelsMissing",
              message: `${named} succeeded${at}, yet ${labelled.message}`,
            },
            job: status,
          };
      }
      return {
        condition: { type, status: "True", reason: "JobSucceeded", message: `${named} succeeded${at}` },
        job: status,
      };
    }
  }
}

/**
 * Whether every host Git gave a SIPCluster carries its SIP labels in the inventory: the label Job's
 * outcome where Argo CD deletes the Job once it succeeded (a PostSync hook, decision 0040).
 */
function sipLabelled(
  cluster: ClusterKey | undefined,
  hosts: readonly HostStatus[] | undefined,
  index: StatusIndex,
): { done: boolean; message: string } | undefined {
  if (cluster === undefined || hosts === undefined || hosts.length === 0) return undefined;
  const [namespace, name] = cluster.split("/");
  const unlabelled = hosts.filter((entry) => {
    const owner = index.facts.inventory.byId(entry.host)?.sipOwner;
    return (
      owner === undefined ||
      owner.namespace !== namespace ||
      owner.name !== name ||
      owner.nodeType !== entry.role
    );
  });
  if (unlabelled.length === 0)
    return { done: true, message: `all ${hosts.length} hosts carry the SIP labels of ${cluster}` };
  return {
    done: false,
    message: `${unlabelled.length} of ${hosts.length} hosts lack the SIP labels of ${cluster} (${unlabelled
      .slice(0, SHOWN_FINDINGS)
      .map((entry) => entry.host)
      .join(", ")}${unlabelled.length > SHOWN_FINDINGS ? ", …" : ""})`,
  };
}

/**
 * `Ready`: every condition above is True; `Applied` may be Unknown (a CR applied by hand, or an agent
 * object the reporter may not read). Otherwise the first condition that is not, with its reason.
 */
function ready(found: readonly Found[]): Found {
  const blocking = found.find(
    (condition) =>
      condition.status !== "True" && !(condition.type === "Applied" && condition.status === "Unknown"),
  );
  if (blocking === undefined)
    return {
      type: "Ready",
      status: "True",
      reason: "Ready",
      message: `${found.map((condition) => condition.type).join(", ")}: all hold`,
    };
  return {
    type: "Ready",
    status: "False",
    reason: blocking.reason,
    message: `${blocking.type}: ${blocking.message}`,
  };
}

function bounded(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
}
