import { readSite } from "../../gitops/site-reader.ts";
import { siteModel } from "../../synth/site/model.ts";
import { readResources } from "../../synth/site/resources.ts";
import { planClusters } from "../../synth/plan/plan-site.ts";
import { EXIT, siteLocation, type Console } from "../common.ts";
import type { ParsedArgs } from "../options.ts";
import type { CLUSTERS_COMMAND } from "../usage.ts";

/**
 * `metalsynth __clusters [--site DIR]`: the site's clusters, one word each (`cluster-west` and
 * `edge-a/cluster-west`), for the completion scripts to offer after `explain`. Hidden from the help;
 * it reads the specs and plans nothing, and says nothing on stderr a shell would show mid-line.
 */
export async function clusters(
  { values }: ParsedArgs<(typeof CLUSTERS_COMMAND)["options"]>,
  io: Console,
): Promise<number> {
  const input = await readSite({ ...siteLocation(values), inventory: [] });
  const { resources, invalid } = readResources(input.documents);
  const { bpaByKey, sipByKey } = planClusters(siteModel(resources, invalid).model);
  const keys = [...new Set([...bpaByKey.keys(), ...sipByKey.keys()])].sort();
  const names = keys.flatMap((key) => [key, key.slice(key.indexOf("/") + 1)]);
  io.out(`${[...new Set(names)].join("\n")}\n`);
  return EXIT.ok;
}
