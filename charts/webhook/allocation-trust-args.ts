/**
 * The arguments that tell `metalsynth webhook` and `metalsynth status --write` which Allocations
 * are the site's (decision 0056): one `--allocation-namespace` pair per namespace (none: every
 * namespace), one `--allocation-manager` pair per field manager. The Helm chart turns each kind of
 * pair into a range over its value (`helm.ts`).
 */
export function allocationTrustArgs(namespaces: readonly string[], managers: readonly string[]): string[] {
  return [
    ...namespaces.flatMap((namespace) => ["--allocation-namespace", namespace]),
    ...managers.flatMap((manager) => ["--allocation-manager", manager]),
  ];
}
