/**
 * The cdk8s app behind `npx cdk8s synth` (see cdk8s.yaml): the same charts `metalsynth synth` renders,
 * for the site in METALSYNTH_SITE (default `examples/site`), all in one App, written to cdk8s's own
 * output directory (`dist/`, or `--output`). It is for people who drive their charts with the cdk8s
 * CLI; `metalsynth synth` remains the tool that writes `rendered/` (with the lock and the
 * kustomizations, atomically).
 */
import { App } from "cdk8s";
import { addSiteCharts } from "../charts/site.ts";
import { evaluateFromSite } from "../gitops/render-site.ts";
import { formatIssues } from "../gitops/report/report.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";

const site = process.env["METALSYNTH_SITE"] ?? "examples/site";
const { input, plan, issues } = await evaluateFromSite({ site });
const ready = renderPlan(plan, issues);
if (!ready) {
  process.stderr.write(formatIssues(issues, "text"));
  process.exit(1);
}
// cdk8s passes the output directory in CDK8S_OUTDIR, which App reads by default.
const app = new App({ recordConstructMetadata: false });
addSiteCharts(ready, input.settings, () => app);
app.synth();
