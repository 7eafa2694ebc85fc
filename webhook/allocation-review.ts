/**
 * The review of an Allocation at the door (`/validate/allocation`, decision 0056): the webhook
 * guards its own truth as it guards the CRs. An Allocation is refused when the site does not trust
 * it (`allocation-trust.ts`: its namespace, the managers that wrote its spec) or when it fails the
 * lock file's checks (`lockFromAllocations`), with the findings the webhook would log had it got in.
 * A host another Allocation lists is only a warning: the pull request that freed it may sync after
 * the one that takes it, and until then neither cluster's new nodes get it.
 */
import { issueText } from "../synth/issue.ts";
import { field, stringField } from "../synth/inventory/raw.ts";
import type { Lock } from "../synth/model/lock.ts";
import { lockFromAllocations } from "../synth/rules/allocation.ts";
import { distrust, type AllocationTrust } from "./allocation-trust.ts";
import type { Finding, Reviewer } from "./site-review.ts";

/** What the Allocations of this site are rendered from, and how they are put right. */
const RESTORE = "Allocations are rendered by metalsynth from Git's lock and applied by the GitOps agents";

/** Reviews Allocations against the lock the others make and the site's trust. */
export class AllocationReviewer implements Reviewer {
  constructor(
    private readonly lock: Lock,
    private readonly trust: AllocationTrust,
  ) {}

  review(object: unknown): Finding[] {
    const metadata = field(object, "metadata");
    const id = `${stringField(metadata, "namespace") ?? ""}/${stringField(metadata, "name") ?? ""}`;
    const why = distrust(object, this.trust);
    if (why !== undefined)
      return [
        {
          rule: "lock-invalid",
          severity: "error",
          text: `Allocation ${id} is not the site's: ${why}; ${RESTORE}`,
        },
      ];
    const { lock, issues } = lockFromAllocations([object]);
    const findings: Finding[] = issues.map((found) => ({
      rule: found.rule,
      severity: found.severity,
      text: issueText(found),
    }));
    const holders = new Map(this.lock.entries.map((entry) => [entry.host, entry.cluster]));
    for (const entry of lock.entries) {
      const other = holders.get(entry.host);
      if (other === undefined || other === entry.cluster) continue;
      findings.push({
        rule: "lock-invalid",
        severity: "warning",
        text: `spec.hosts: ${entry.host} is also allocated by Allocation ${other}: no new node gets it until one of the two no longer lists it (the directory that frees it has not synced yet)`,
      });
    }
    return findings;
  }
}
