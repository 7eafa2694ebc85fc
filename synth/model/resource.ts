/** A CR as the site holds it once its schema accepted it (decision 0049: the vocabulary of synth/). */
import type { Annotations, DnsLabel, DnsSubdomain, Labels } from "../checked.ts";
import type { SourceDocument } from "../documents.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import type { RuleId } from "../rule-catalogue.ts";
import type { CrKind } from "../schema/kinds.ts";
import type { ClusterSpec } from "../schema/cluster.ts";
import type { ProvisioningSpec } from "../schema/provisioning.ts";
import type { SipClusterSpec } from "../schema/sipcluster.ts";
import type { SoftwareSpec } from "../schema/software.ts";

/** The typed object of each kind, after schema validation. */
interface SpecByKind {
  Provisioning: ProvisioningSpec;
  Software: SoftwareSpec;
  Cluster: ClusterSpec;
  SIPCluster: SipClusterSpec;
}

/** A schema-valid CR with the way back to its source lines. */
export interface Resource<K extends CrKind = CrKind> {
  readonly kind: K;
  /** Checked (`name-invalid`): it becomes the namespace of every object rendered for the CR. */
  readonly namespace: DnsLabel;
  /** Checked (`name-invalid`): it reaches object names and rendered/'s paths. */
  readonly name: DnsSubdomain;
  /** Checked (`metadata-invalid`): `specs.yaml` carries them to the API server. */
  readonly labels: Labels;
  /** Checked (`metadata-invalid`), as {@link labels}. */
  readonly annotations: Annotations;
  /** `Kind/namespace/name`: identity for "the object under review replaces the known one". */
  readonly key: string;
  readonly object: SpecByKind[K];
  readonly document: SourceDocument;
  /** Where the object sits in its document (`["items", 3]` inside a `kind: List`). */
  readonly basePath: FieldPath;
}

/**
 * A CR of a known kind that failed its schema: left out of the model, but remembered so that a CR
 * referring to it is not also told that it does not exist (one mistake, one finding).
 */
export interface InvalidResource {
  /** One of the {@link CrKind}s. */
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `metadata.labels.cluster`, when it is a string. */
  readonly cluster?: string;
}

/** Any of the four kinds, discriminated by `kind`. */
export type AnyResource = { [K in CrKind]: Resource<K> }[CrKind];

/** Builds one issue about a resource (`reporter` in `synth/rules/reporter.ts`). */
export type Reporter = (rule: RuleId, path: FieldPath, message: string) => Issue;
