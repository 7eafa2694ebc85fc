/**
 * Which files of a `rendered/` tree metalsynth wrote, so that a write may delete them: apart from
 * render-write.ts, which loads it only when a file is about to go, so that a synth that changes
 * nothing loads no YAML parser (decision 0066).
 */
import { parseAllDocuments } from "yaml";
import { field, isRecord } from "../synth/inventory/raw.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";

/**
 * Whether metalsynth wrote `file` of a `rendered/` tree (relative POSIX path, content), so a write
 * may delete it: the lock, or a YAML file where metalsynth puts them (`clusters/<ns>/<cluster>/`,
 * `argocd/`, `flux/`) whose every document is an object it renders: labelled
 * `app.kubernetes.io/managed-by: metalsynth`, a kustomize `Kustomization`, or a partial Metal3
 * BareMetalHost (the SIP label patches, nothing but the SIP labels, of trees rendered before
 * decision 0040, which a write replaces). A README, a hand-added
 * manifest or notes are not, and synth refuses to delete them.
 */
export function isRenderedFile(file: string, content: Buffer): boolean {
  if (file === LOCK_FILE) return true;
  if (!/^(clusters\/[^/]+\/[^/]+|argocd|flux)\/[^/]+\.yaml$/.test(file)) return false;
  let documents;
  try {
    documents = parseAllDocuments(content.toString("utf8"));
  } catch {
    return false;
  }
  if (!Array.isArray(documents) || documents.length === 0) return false;
  return documents.every((document) => {
    if (document.errors.length > 0) return false;
    const value: unknown = document.toJS();
    return isRenderedObject(value);
  });
}

function isRenderedObject(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { apiVersion, kind } = value;
  const labels = field(field(value, "metadata"), "labels");
  if (isRecord(labels) && labels[MANAGED_BY] === "metalsynth") return true;
  if (
    kind === "Kustomization" &&
    typeof apiVersion === "string" &&
    apiVersion.startsWith("kustomize.config.k8s.io/")
  )
    return true;
  return (
    kind === "BareMetalHost" &&
    typeof apiVersion === "string" &&
    apiVersion.startsWith("metal3.io/") &&
    value["spec"] === undefined
  );
}

const MANAGED_BY = "app.kubernetes.io/managed-by";
