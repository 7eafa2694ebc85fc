import { UsageError } from "../gitops/errors.ts";
import { parseDnsLabel } from "../synth/checked.ts";
import { DEFAULT_ALLOCATION_MANAGERS, type AllocationTrust } from "../webhook/allocation-trust.ts";

/**
 * The site's {@link AllocationTrust} from `--allocation-namespace` and `--allocation-manager`
 * (declared once in bin/usage.ts, for the webhook and the status reporter alike): every namespace
 * and the GitOps agents' managers by default.
 */
export function allocationTrust(flags: {
  readonly "allocation-namespace"?: readonly string[] | undefined;
  readonly "allocation-manager"?: readonly string[] | undefined;
}): AllocationTrust {
  const trust: AllocationTrust = {
    namespaces: flags["allocation-namespace"] ?? [],
    managers: flags["allocation-manager"] ?? DEFAULT_ALLOCATION_MANAGERS,
  };
  for (const namespace of trust.namespaces)
    if (parseDnsLabel(namespace) === undefined)
      throw new UsageError(`--allocation-namespace must be a namespace name, not "${namespace}"`);
  for (const manager of trust.managers)
    if (!/^\S{1,128}$/.test(manager))
      throw new UsageError(`--allocation-manager must be a field manager's name, not "${manager}"`);
  return trust;
}
