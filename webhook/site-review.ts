/**
 * The review of one object against what the webhook knows: the inventory index, the CRs known from
 * the site's specs and from the cluster, and the site's lock. The rules are synth's, unchanged; this
 * module only decides which of their findings concern the object under review
 * (docs/decisions/0011-webhook-admission-scope.md).
 */
import type { SourceDocument } from "../synth/documents.ts";
import { compareText, type Issue } from "../synth/issue.ts";
import type { RuleId, Severity } from "../synth/rule-catalogue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import type { Lock } from "../synth/model/lock.ts";
import { SiteSnapshot } from "../synth/snapshot.ts";
import { readResources } from "../synth/site/resources.ts";
import type { AnyResource, InvalidResource } from "../synth/model/resource.ts";
import { NO_DAMAGE, type LockDamage } from "./allocations.ts";

/** What the webhook knows at one moment. Immutable: a change builds a new one. */
export interface KnownSite {
  readonly inventory: Inventory;
  /** CRs known from the site's specs and the cluster, sorted by key. */
  readonly resources: readonly AnyResource[];
  /**
   * CRs of the site or the cluster that fail their schema, hence are not in `resources`: a CR that
   * refers to one is not also told that it does not exist, as `metalsynth validate` would not.
   * @default none
   */
  readonly invalid?: readonly InvalidResource[];
  readonly lock: Lock;
}

/** One finding to tell the user, already worded. */
export interface Finding {
  readonly rule: RuleId;
  readonly severity: Severity;
  /** `<field path>: <message>`, after `<Kind> <namespace>/<name> ` when it is about another object. */
  readonly text: string;
}

/** Reviews one object (a parsed request object): every finding, errors and warnings. */
export interface Reviewer {
  review(object: unknown): Finding[];
}

/** Where an object under review comes from, in issue positions (the user never sees them). */
const REVIEWED = "admission request";

/**
 * A document for an object that has no source text (an admission request, an object from the API
 * server). Every field path resolves to the same position; the webhook's messages use field paths.
 */
export function objectDocument(value: unknown, origin: string): SourceDocument {
  const position = { file: origin, line: 1, column: 1 };
  return { file: origin, index: 0, value, position: () => position };
}

/**
 * The CRs the webhook knows: from the site's specs and from the cluster. An object in both is taken
 * from the cluster, which holds what was really applied. Sorted by key, as `readResources` sorts, so
 * rules that keep "the first" of two objects decide as `metalsynth validate` would.
 */
export function knownResources(site: readonly AnyResource[], cluster: readonly AnyResource[]): AnyResource[] {
  const inCluster = new Set(cluster.map((resource) => resource.key));
  return [...site.filter((resource) => !inCluster.has(resource.key)), ...cluster].sort((a, b) =>
    compareText(a.key, b.key),
  );
}

/**
 * Reviews objects against one {@link KnownSite}. The object under review replaces any known object of
 * the same kind, namespace and name (so an UPDATE, or a CREATE of a CR the site already has, never
 * conflicts with itself). The result is every finding about the object itself, plus every error it
 * newly causes on another object (a host it takes away, a NodePort it reuses); errors that other
 * objects had before are not its concern.
 */
export class SiteReviewer implements Reviewer {
  #snapshot: SiteSnapshot | undefined;
  #baselineErrors: ReadonlySet<string> | undefined;

  /**
   * Reviews against `site`, evaluated on first use, or against a snapshot already taken of it.
   * `damage`: what is wrong with the allocation set the lock came from. An object of a damaged
   * cluster is refused with it (as `metalsynth validate` refuses a site whose lock is damaged);
   * objects of other clusters are reviewed, and the contested hosts are in the snapshot's
   * inventory as unavailable (decision 0056).
   */
  constructor(
    private readonly site: KnownSite | SiteSnapshot,
    private readonly damage: LockDamage = NO_DAMAGE,
  ) {}

  /** All findings for `object` (a parsed request object), errors and warnings, in report order. */
  review(object: unknown): Finding[] {
    const read = readResources([objectDocument(object, REVIEWED)]);
    const own: Issue[] = [...read.issues];
    const caused: Issue[] = [];
    const resource = read.resources[0];
    const damaged = resource && this.damage.allocations.get(clusterOf(resource));
    if (resource !== undefined && damaged !== undefined) return refusals(clusterOf(resource), damaged);
    if (resource !== undefined) {
      const { snapshot } = this;
      const before = this.#baseline(snapshot);
      for (const found of snapshot.change(resource)) {
        if (found.object === resource.key) own.push(admissionSeverity(found));
        else if (found.severity === "error" && !before.has(identity(found))) caused.push(found);
      }
    }
    return [
      ...own.sort(byPath).map((found) => finding(found, text(found))),
      ...caused
        .sort(byObjectThenPath)
        .map((found) => finding(found, `${describeObject(found)} ${text(found)}`)),
    ];
  }

  /**
   * The known site, evaluated once: each request evaluates only what its object can reach from
   * there.
   */
  get snapshot(): SiteSnapshot {
    this.#snapshot ??= this.site instanceof SiteSnapshot ? this.site : SiteSnapshot.of(this.site);
    return this.#snapshot;
  }

  /** The errors of the known site on its own. */
  #baseline(snapshot: SiteSnapshot): ReadonlySet<string> {
    this.#baselineErrors ??= new Set(
      snapshot.issues.filter((found) => found.severity === "error").map(identity),
    );
    return this.#baselineErrors;
  }
}

/** Damage findings shown per refusal; the rest are counted. */
const SHOWN_DAMAGE = 3;

/** The refusal of an object of `cluster`, whose Allocation is damaged: the damage, and what to do. */
function refusals(cluster: string, damage: readonly Issue[]): Finding[] {
  const shown = damage.slice(0, SHOWN_DAMAGE).map((found) => {
    const where = found.object === undefined ? "" : `${describeObject(found)} `;
    return finding(found, `the Allocation of cluster ${cluster} is damaged: ${where}${text(found)}`);
  });
  const more = damage.length - shown.length;
  const rule = damage[0]?.rule ?? "lock-invalid";
  const advice = `metalsynth refuses changes to cluster ${cluster} until its Allocation${more > 0 ? ` (${more} more findings)` : ""} is restored from Git, as \`metalsynth validate\` refuses a damaged lock; other clusters are not held up`;
  return [...shown, { rule, severity: "error", text: advice }];
}

/** The key of the cluster `resource` belongs to: a SIPCluster's own, a BPA CR's `cluster` label. */
function clusterOf(resource: AnyResource): string {
  if (resource.kind === "SIPCluster") return `${resource.namespace}/${resource.name}`;
  return `${resource.namespace}/${resource.labels.cluster ?? ""}`;
}

/**
 * Rules about the CRs a CR refers to (`cluster-ref`: the Provisioning a Software installs on, the CRs
 * a Cluster glues) warn at admission instead of refusing: `kubectl apply -f specs/`, Flux and Argo CD
 * apply a cluster's CRs one by one, and the referenced one may be next, or not yet seen by the
 * informers. `metalsynth validate` and synth, which see the whole site at once, keep them errors
 * (decision 0011).
 */
const ORDER_DEPENDENT_RULES: ReadonlySet<string> = new Set(["cluster-ref"]);

function admissionSeverity(found: Issue): Issue {
  if (found.severity !== "error" || !ORDER_DEPENDENT_RULES.has(found.rule)) return found;
  return { ...found, severity: "warning", message: `${found.message} (not refused: it may be applied next)` };
}

/** The same finding on the same object, whatever its message's counts say. */
function identity(found: Issue): string {
  return `${found.object ?? ""}\u0000${found.rule}\u0000${found.path}`;
}

function finding(found: Issue, wording: string): Finding {
  return { rule: found.rule, severity: found.severity, text: wording };
}

function text(found: Issue): string {
  return found.path === "" ? found.message : `${found.path}: ${found.message}`;
}

/** `Provisioning edge-a/cluster-west` from the key `Provisioning/edge-a/cluster-west`. */
function describeObject(found: Issue): string {
  const key = found.object ?? "";
  const slash = key.indexOf("/");
  return slash === -1 ? key : `${key.slice(0, slash)} ${key.slice(slash + 1)}`;
}

function byPath(a: Issue, b: Issue): number {
  return compareText(a.path, b.path) || compareText(a.rule, b.rule) || compareText(a.message, b.message);
}

function byObjectThenPath(a: Issue, b: Issue): number {
  return compareText(a.object ?? "", b.object ?? "") || byPath(a, b);
}
