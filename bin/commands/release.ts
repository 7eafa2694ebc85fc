import path from "node:path";
import { UsageError } from "../../gitops/errors.ts";
import { releaseFromSite } from "../../gitops/render-site.ts";
import { checkOutput, writeRendered } from "../../gitops/render-write.ts";
import { checkSite } from "../../gitops/site-reader.ts";
import { EXIT, interruptible, siteLocation, summary, type Command } from "../common.ts";
import { findingsIn } from "../findings.ts";

/**
 * `metalsynth release HOST…`: lets the nodes of hosts the snapshot lost, or that went off or into
 * error, leave them (decision 0052), and renders the site so (as synth, atomically; nothing is
 * written when a host can't be released or the site has errors).
 */
export const release: Command<"release"> = async ({ values, operands: hosts }, io) => {
  if (hosts.length === 0) throw new UsageError("release takes the hosts to release (namespace/name)");
  const location = siteLocation(values);
  await checkSite(location.site ?? ".");
  await checkOutput(location.out ?? path.join(location.site ?? ".", "rendered"));
  const { input, issues, release: outcome, rendered } = await releaseFromSite(location, hosts);
  if (outcome.refused.length > 0) {
    for (const refusal of outcome.refused) io.err(`metalsynth: cannot release ${refusal}\n`);
    io.err(`metalsynth: nothing released; ${input.out} left unchanged\n`);
    return EXIT.invalid;
  }
  if (rendered === undefined) {
    io.out(findingsIn(issues, "text"));
    io.err(`${summary(issues)}; nothing released, ${input.out} left unchanged\n`);
    return EXIT.invalid;
  }
  const { kept } = rendered;
  const change = await interruptible((signal) => writeRendered(input.out, rendered.files, { signal, kept }));
  if (issues.length > 0) io.err(findingsIn(issues, "text"));
  for (const { entry, why } of outcome.released) {
    const node = entry.kind === "bpa" ? `${entry.role} ${entry.node}` : `role ${entry.role}`;
    io.out(`released ${entry.host} from ${entry.cluster} (${node}): ${why}\n`);
  }
  for (const cluster of rendered.clusters) {
    const roles = cluster.roles.map(({ role, hosts: ids }) => `${ids.length} ${role}(s) [${ids.join(", ")}]`);
    io.out(`${cluster.cluster}: ${roles.join(", ")}, ${cluster.objects} objects in ${cluster.directory}\n`);
  }
  io.out(
    `wrote ${input.out}: ${change.added.length} added, ${change.changed.length} changed, ${change.removed.length} removed, ${change.unchanged} unchanged\n`,
  );
  return EXIT.ok;
};
