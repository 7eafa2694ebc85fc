/**
 * Kubernetes label selectors (`metav1.LabelSelector`): the type SIPCluster's `spec.nodes.*.labelSelector`
 * uses, its matching semantics, and syntax checks that return problems as values.
 *
 * Semantics follow apimachinery's `LabelSelectorAsSelector`: every `matchLabels` entry and every
 * expression must hold; an empty selector matches everything.
 * https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
import type { FieldPath } from "../field-path.ts";

/** The operators Kubernetes accepts in `matchExpressions`. */
export const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

/**
 * One `matchExpressions` entry. `operator` is typed as `string` on purpose: selectors come from user
 * CRs, and {@link selectorProblems} is where an unknown operator gets its readable message.
 */
export interface LabelSelectorRequirement {
  readonly key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  readonly operator: string;
  /** Required (non-empty) for `In`/`NotIn`, forbidden for `Exists`/`DoesNotExist`. */
  readonly values?: readonly string[];
}

/** A Kubernetes label selector. Both parts are ANDed; an empty selector matches every host. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** A syntax problem in a selector, with the path inside the selector (`matchExpressions[0].values`). */
export interface SelectorProblem {
  readonly path: FieldPath;
  readonly message: string;
}

/**
 * True when `labels` satisfy `selector`. Like Kubernetes, `NotIn` also matches hosts without the key,
 * and an unknown operator matches nothing (the selector is invalid; validation reports why).
 */
export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    if (!matchesRequirement(labels, requirement)) return false;
  }
  return true;
}

/** Evaluates one `matchExpressions` entry. */
export function matchesRequirement(
  labels: Readonly<Record<string, string>>,
  requirement: LabelSelectorRequirement,
): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = present ? labels[requirement.key] : undefined;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
    default:
      return false;
  }
}

/** A DNS-1123 label: what Kubernetes allows as a namespace, and what a host name part must be. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;

/**
 * Why `key` is not a valid label key (`[prefix/]name`: an optional DNS-1123 subdomain of at most 253
 * characters, then a name of at most 63 alphanumerics, `-`, `_`, `.`), or `undefined` when it is.
 * The wording follows apimachinery's `IsQualifiedName` so users recognise it from kubectl.
 */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) {
    return `"${key}" has more than one "/" (a label key is [prefix/]name)`;
  }
  const [prefix, name] = parts.length === 2 ? [parts[0] ?? "", parts[1] ?? ""] : [undefined, parts[0] ?? ""];
  if (prefix !== undefined) {
    if (prefix.length === 0) return `"${key}" has an empty prefix before "/"`;
    if (prefix.length > MAX_PREFIX) return `prefix of "${key}" is longer than ${MAX_PREFIX} characters`;
    if (!DNS1123_SUBDOMAIN.test(prefix)) {
      return `prefix "${prefix}" of "${key}" must be a lowercase DNS subdomain (e.g. example.com)`;
    }
  }
  if (name.length === 0) return `"${key}" has an empty name part`;
  if (name.length > MAX_NAME) return `name part of "${key}" is longer than ${MAX_NAME} characters`;
  if (!NAME_PART.test(name)) {
    return `name part of "${key}" must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric`;
  }
  return undefined;
}

/**
 * Why `value` is not a valid label value (empty, or at most 63 alphanumerics, `-`, `_`, `.` starting
 * and ending with an alphanumeric), or `undefined` when it is.
 */
export function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > MAX_NAME) return `label value "${value}" is longer than ${MAX_NAME} characters`;
  if (!NAME_PART.test(value)) {
    return `label value "${value}" must be empty or consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric`;
  }
  return undefined;
}

/**
 * Every syntax problem of `selector`, in field order: invalid keys and values, `In`/`NotIn` without
 * values, `Exists`/`DoesNotExist` with values, unknown operators. Empty when the selector is valid.
 */
export function selectorProblems(selector: LabelSelector): SelectorProblem[] {
  const problems: SelectorProblem[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) problems.push({ path: ["matchLabels", key], message: keyProblem });
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) problems.push({ path: ["matchLabels", key], message: valueProblem });
  }
  (selector.matchExpressions ?? []).forEach((requirement, index) => {
    const at = (...rest: (string | number)[]): FieldPath => ["matchExpressions", index, ...rest];
    const keyProblem = labelKeyProblem(requirement.key);
    if (keyProblem !== undefined) problems.push({ path: at("key"), message: keyProblem });
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          problems.push({
            path: at("values"),
            message: `operator ${requirement.operator} needs at least one value`,
          });
        }
        values.forEach((value, valueIndex) => {
          const valueProblem = labelValueProblem(value);
          if (valueProblem !== undefined)
            problems.push({ path: at("values", valueIndex), message: valueProblem });
        });
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          problems.push({
            path: at("values"),
            message: `operator ${requirement.operator} takes no values (found ${values.length}); remove them`,
          });
        }
        break;
      default:
        problems.push({
          path: at("operator"),
          message: `unknown operator "${requirement.operator}" (expected one of ${SELECTOR_OPERATORS.join(", ")})`,
        });
    }
  });
  return problems;
}
