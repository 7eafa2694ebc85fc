import { UsageError } from "../../gitops/errors.ts";
import { MAP_TO_STDOUT, writeSiteMap } from "../../gitops/map-file.ts";
import { readPreviousLock } from "../../gitops/previous-lock.ts";
import { readSite } from "../../gitops/site-reader.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { compareIssues, hasErrors } from "../../synth/issue.ts";
import { EXIT, siteLocation, summary, type Command } from "../common.ts";

/** Where the map goes without `--out`. */
const DEFAULT_MAP = "map.html";

/**
 * `metalsynth map`: the site as one HTML page (racks, hosts, clusters, free capacity, findings),
 * written even when the site has errors, which it shows; the exit code then says so (1), as
 * validate's would. `--diff [LOCKFILE]` marks hosts changing hands against that lock or HEAD's.
 */
export const map: Command<"map"> = async ({ values }, io) => {
  // `--diff` alone compares with HEAD's lock, `--diff FILE` with FILE's.
  const diff = values.diff === undefined ? undefined : values.diff === "" ? {} : { file: values.diff };
  const groupBy = values["group-by"];
  if (groupBy === "") throw new UsageError("--group-by needs a label key");
  const file = values.out ?? DEFAULT_MAP;
  // --out names the page here; the lock is read from the site's rendered/ as everywhere else.
  // As explain: not render-site's evaluateFromSite, which would load cdk8s (decision 0018).
  const input = await readSite(siteLocation({ ...values, out: undefined }));
  const { plan, issues: found } = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...found].sort(compareIssues);
  const previous = diff && (await readPreviousLock(diff.file, input.out, process.cwd()));
  const facts = await writeSiteMap(
    file,
    {
      inventory: input.inventory,
      plan,
      issues,
      ...(groupBy === undefined ? {} : { groupBy }),
      ...(previous ? { previous } : {}),
    },
    io.out,
  );
  // With the page on stdout, the summary goes to stderr, like the findings.
  const toStdout = file === MAP_TO_STDOUT;
  (toStdout ? io.err : io.out)(`wrote ${toStdout ? "the map" : file}: ${facts}\n`);
  // The findings are on the page; a count here, and validate lists them as text.
  if (issues.length > 0) io.err(`${summary(issues)}, shown on the map ('metalsynth validate' lists them)\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
};
