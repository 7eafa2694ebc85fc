/**
 * The API objects the status reporter reads besides the site (decision 0059), as plain values: the
 * four CR kinds' metadata and last status, the Jobs metalsynth rendered, and the GitOps agents'
 * objects (a Flux Kustomization, an Argo CD Application). Every field is checked where it is read:
 * these come from the API server, written by other controllers, and may lack anything.
 */
import { field, isRecord, stringField } from "../inventory/raw.ts";
import { ConditionSchema, type Condition } from "../schema/status.ts";
import { kindFor, type CrKind } from "../schema/kinds.ts";

/** What a rendered Job runs. */
export type JobComponent = "kud" | "software" | "labels";

/** The name prefix of each component's Job (docs/contract.md §4.1, §4.2). */
export const JOB_PREFIXES: Readonly<Record<JobComponent, string>> = {
  kud: "kud",
  software: "software",
  labels: "bmh-labels",
};

/** The label naming the cluster every rendered object belongs to (charts/metadata.ts). */
export const CLUSTER_LABEL = "metalsynth.io/cluster";
/** The label on every rendered object (charts/metadata.ts). */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";

/** Longest Job name the charts render (a label value: the Job controller copies it into pod labels). */
const MAX_JOB_NAME = 63;

/**
 * What a Job of `component` for `cluster` is named before its hash: `<prefix>-<cluster>-`, the
 * cluster's name cut so that the whole name with its eight hex digits fits 63 characters, as
 * `hashedJob` (charts/metadata.ts) names it; charts/job-names.test.ts holds the two together.
 */
export function jobNameStem(component: JobComponent, cluster: string): string {
  const prefix = JOB_PREFIXES[component];
  const room = MAX_JOB_NAME - prefix.length - 8 - 2;
  return `${prefix}-${cluster.slice(0, room).replace(/-+$/, "")}-`;
}

/** How a Job stands, as the Job controller's status says. */
export type JobPhase = "Pending" | "Running" | "Succeeded" | "Failed";

/** A Job metalsynth rendered, as the reporter reads it. */
export interface JobView {
  readonly namespace: string;
  readonly name: string;
  /** The `metalsynth.io/cluster` label: the cluster's name (a BPA `cluster` label, a SIPCluster's name). */
  readonly cluster: string;
  readonly component: JobComponent;
  /** `metadata.creationTimestamp` (RFC 3339), `""` when absent: of two Jobs, the later one is current. */
  readonly created: string;
  readonly phase: JobPhase;
  /** The Complete or Failed condition's reason (`BackoffLimitExceeded`). */
  readonly reason?: string;
  /** The Failed condition's message. */
  readonly message?: string;
  readonly startTime?: string;
  readonly completionTime?: string;
}

/**
 * A Job metalsynth rendered (managed by metalsynth, labelled with its cluster, named
 * `<prefix>-<cluster>-<hash8>`), or `undefined` for any other Job.
 */
export function readJob(value: unknown): JobView | undefined {
  const metadata = field(value, "metadata");
  const labels = field(metadata, "labels");
  const namespace = stringField(metadata, "namespace");
  const name = stringField(metadata, "name");
  const cluster = stringField(labels, CLUSTER_LABEL);
  if (stringField(labels, MANAGED_BY_LABEL) !== "metalsynth") return undefined;
  if (namespace === undefined || name === undefined || cluster === undefined) return undefined;
  const component = (Object.keys(JOB_PREFIXES) as JobComponent[]).find((candidate) => {
    const stem = jobNameStem(candidate, cluster);
    return name.startsWith(stem) && /^[0-9a-f]{8}$/.test(name.slice(stem.length));
  });
  if (component === undefined) return undefined;
  const status = field(value, "status");
  const conditions = field(status, "conditions");
  const trueCondition = (type: string) =>
    Array.isArray(conditions)
      ? conditions.find(
          (condition) =>
            stringField(condition, "type") === type && stringField(condition, "status") === "True",
        )
      : undefined;
  const complete = trueCondition("Complete");
  const failed = trueCondition("Failed");
  const startTime = timeField(status, "startTime");
  const completionTime = timeField(status, "completionTime");
  const active = field(status, "active");
  const phase: JobPhase = complete
    ? "Succeeded"
    : failed
      ? "Failed"
      : startTime !== undefined || (typeof active === "number" && active > 0)
        ? "Running"
        : "Pending";
  const finished = complete ?? failed;
  const reason = stringField(finished, "reason");
  const message = failed === undefined ? undefined : stringField(failed, "message");
  return {
    namespace,
    name,
    cluster,
    component,
    created: timeField(metadata, "creationTimestamp") ?? "",
    phase,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    ...(startTime === undefined ? {} : { startTime }),
    ...(completionTime === undefined ? {} : { completionTime }),
  };
}

/**
 * A time field as RFC 3339 in whole seconds, as the API server writes it: a string in JSON, a `Date`
 * where a typed client deserialised it (client-node's lists of built-in kinds do; watch events don't).
 */
function timeField(value: unknown, key: string): string | undefined {
  const found = field(value, key);
  if (found instanceof Date)
    return Number.isNaN(found.getTime()) ? undefined : found.toISOString().replace(/\.\d{3}Z$/, "Z");
  return typeof found === "string" ? found : undefined;
}

/** A CR of the four kinds as the reporter reads it: who it is, its generation, its last status. */
export interface CrView {
  readonly kind: CrKind;
  readonly namespace: string;
  readonly name: string;
  /** `Kind/namespace/name`, as synth keys CRs. */
  readonly key: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** `status.conditions` as they are, the well-formed ones. */
  readonly conditions: readonly Condition[];
  /** `status` as it is (compared with what would be written). */
  readonly status: unknown;
}

/** A CR of one of the four kinds, or `undefined` for anything else. */
export function readCr(value: unknown): CrView | undefined {
  if (!isRecord(value)) return undefined;
  const definition = kindFor(value.apiVersion, value.kind);
  const metadata = field(value, "metadata");
  const name = stringField(metadata, "name");
  const namespace = stringField(metadata, "namespace") ?? "default";
  if (definition === undefined || name === undefined) return undefined;
  const kind = definition.kind as CrKind;
  const generation = field(metadata, "generation");
  const uid = stringField(metadata, "uid");
  const resourceVersion = stringField(metadata, "resourceVersion");
  const status = field(value, "status");
  const conditions = field(status, "conditions");
  return {
    kind,
    namespace,
    name,
    key: `${kind}/${namespace}/${name}`,
    ...(uid === undefined ? {} : { uid }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    generation: typeof generation === "number" ? generation : 0,
    labels: stringMap(field(metadata, "labels")),
    annotations: stringMap(field(metadata, "annotations")),
    conditions: Array.isArray(conditions)
      ? conditions.flatMap((condition: unknown) => {
          const parsed = ConditionSchema.safeParse(condition);
          return parsed.success ? [parsed.data] : [];
        })
      : [],
    status,
  };
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** The kind of GitOps agent object. */
export type AgentKind = "Kustomization" | "Application";

/** What a CR's metadata says about the agent object that applied it. */
export interface AgentRef {
  readonly kind: AgentKind;
  /** Absent for an Argo CD Application named without its namespace (found by name). */
  readonly namespace?: string;
  readonly name: string;
}

/** Flux's owner labels (kustomize-controller sets them on every object it applies). */
const FLUX_NAME = "kustomize.toolkit.fluxcd.io/name";
const FLUX_NAMESPACE = "kustomize.toolkit.fluxcd.io/namespace";
/** Argo CD's tracking annotation (its default tracking method): `<app>:<group>/<kind>:<ns>/<name>`. */
const ARGO_TRACKING = "argocd.argoproj.io/tracking-id";
/** Argo CD's tracking label (the label tracking method). */
const ARGO_INSTANCE = "app.kubernetes.io/instance";

/**
 * The agent object that applied a CR, from the marks the agent left on it: Flux's owner labels, Argo
 * CD's tracking annotation (an Application outside Argo CD's own namespace is written
 * `<namespace>_<name>` there) or, failing both, its instance label. `undefined`: no agent's marks.
 */
export function agentRefOf(cr: Pick<CrView, "labels" | "annotations">): AgentRef | undefined {
  const fluxName = cr.labels[FLUX_NAME];
  const fluxNamespace = cr.labels[FLUX_NAMESPACE];
  if (fluxName !== undefined && fluxNamespace !== undefined)
    return { kind: "Kustomization", namespace: fluxNamespace, name: fluxName };
  const tracking = cr.annotations[ARGO_TRACKING];
  const app = tracking === undefined ? cr.labels[ARGO_INSTANCE] : tracking.split(":")[0];
  if (app === undefined || app === "") return undefined;
  const underscore = app.indexOf("_");
  return underscore === -1
    ? { kind: "Application", name: app }
    : { kind: "Application", namespace: app.slice(0, underscore), name: app.slice(underscore + 1) };
}

/** What an agent object says of its last apply. */
export interface AgentView {
  readonly kind: AgentKind;
  readonly namespace: string;
  readonly name: string;
  /** Whether the revision it holds is applied: True, False (failed or under way), Unknown. */
  readonly applied: "True" | "False" | "Unknown";
  /** `Applied`, `ApplyFailed`, `Applying`, `OutOfSync` or `AgentUnknown`. */
  readonly reason: string;
  readonly message: string;
  /** The revision applied (or being applied, when not applied). */
  readonly revision?: string;
}

/** A Flux Kustomization (kustomize.toolkit.fluxcd.io), as kustomize-controller writes its status. */
export function readKustomization(value: unknown): AgentView | undefined {
  const identity = agentIdentity(value, "Kustomization");
  if (identity === undefined) return undefined;
  const status = field(value, "status");
  const applied = stringField(status, "lastAppliedRevision");
  const attempted = stringField(status, "lastAttemptedRevision");
  const ready = conditionOf(status, "Ready");
  const readyMessage = stringField(ready, "message") ?? "";
  const name = `Flux Kustomization ${identity.namespace}/${identity.name}`;
  // The revision is applied once kustomize-controller applied the last one it tried; a health check
  // failing after that (a Job in healthChecks) is the Job's condition, not the apply's.
  if (applied && (attempted === undefined || attempted === applied)) {
    const health =
      stringField(ready, "status") === "False" ? ` (not Ready: ${oneLineShort(readyMessage)})` : "";
    return {
      ...identity,
      applied: "True",
      reason: "Applied",
      message: `${name} applied revision ${applied}${health}`,
      revision: applied,
    };
  }
  const revision = attempted ?? applied;
  const at = revision === undefined ? "" : ` revision ${revision}`;
  if (stringField(ready, "status") === "False")
    return {
      ...identity,
      applied: "False",
      reason: "ApplyFailed",
      message: `${name} failed to apply${at}: ${oneLineShort(readyMessage)}`,
      ...(revision === undefined ? {} : { revision }),
    };
  return {
    ...identity,
    applied: "False",
    reason: "Applying",
    message: `${name} has not applied${at} yet${readyMessage ? `: ${oneLineShort(readyMessage)}` : ""}`,
    ...(revision === undefined ? {} : { revision }),
  };
}

/** An Argo CD Application (argoproj.io), as its application controller writes its status. */
export function readApplication(value: unknown): AgentView | undefined {
  const identity = agentIdentity(value, "Application");
  if (identity === undefined) return undefined;
  const status = field(value, "status");
  const sync = field(status, "sync");
  const syncStatus = stringField(sync, "status");
  const revisions = field(sync, "revisions");
  const revision =
    stringField(sync, "revision") ??
    (Array.isArray(revisions) && typeof revisions[0] === "string" ? revisions[0] : undefined);
  const operation = field(status, "operationState");
  const phase = stringField(operation, "phase");
  const operationMessage = oneLineShort(stringField(operation, "message") ?? "");
  const name = `Argo CD Application ${identity.namespace}/${identity.name}`;
  const at = revision === undefined ? "" : ` revision ${revision}`;
  const withRevision = revision === undefined ? {} : { revision };
  if (phase === "Running")
    return {
      ...identity,
      applied: "False",
      reason: "Applying",
      message: `${name} is syncing${at}`,
      ...withRevision,
    };
  if (syncStatus === "Synced") {
    const last =
      phase === "Failed" || phase === "Error"
        ? ` (its last sync operation: ${phase}: ${operationMessage})`
        : "";
    return {
      ...identity,
      applied: "True",
      reason: "Applied",
      message: `${name} synced${at}${last}`,
      ...withRevision,
    };
  }
  if (phase === "Failed" || phase === "Error")
    return {
      ...identity,
      applied: "False",
      reason: "ApplyFailed",
      message: `${name} failed to sync${at}: ${operationMessage}`,
      ...withRevision,
    };
  if (syncStatus === "OutOfSync")
    return {
      ...identity,
      applied: "False",
      reason: "OutOfSync",
      message: `${name} is out of sync with${at || " Git"}`,
      ...withRevision,
    };
  return {
    ...identity,
    applied: "Unknown",
    reason: "AgentUnknown",
    message: `${name} reports no sync status yet`,
    ...withRevision,
  };
}

function agentIdentity(
  value: unknown,
  kind: AgentKind,
): { kind: AgentKind; namespace: string; name: string } | undefined {
  if (stringField(value, "kind") !== kind) return undefined;
  const metadata = field(value, "metadata");
  const name = stringField(metadata, "name");
  const namespace = stringField(metadata, "namespace");
  return name === undefined || namespace === undefined ? undefined : { kind, namespace, name };
}

function conditionOf(status: unknown, type: string): unknown {
  const conditions = field(status, "conditions");
  return Array.isArray(conditions)
    ? conditions.find((condition) => stringField(condition, "type") === type)
    : undefined;
}

/** Longest piece of another controller's message quoted in a condition. */
const QUOTED = 400;

/** Another controller's message on one line, at most {@link QUOTED} characters. */
export function oneLineShort(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > QUOTED ? `${line.slice(0, QUOTED - 1)}…` : line;
}
