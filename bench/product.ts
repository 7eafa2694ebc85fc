/**
 * What the bench times, imported from the compiled JavaScript in dist/ (`npm run build`), which is
 * what `metalsynth` runs once installed. The sources run through tsx would be slower than the
 * product: tsx's esbuild transform keeps function names by wrapping every function it creates in a
 * helper call, which cost planning and reviews 20–30 % on this machine. Generating inputs and
 * summing up figures still use the sources. `npm run bench` builds first; a bench module run on its
 * own (`npx tsx bench/hub.ts`) times whatever was built last.
 */
export { readInventory } from "../dist/gitops/inventory-reader.js";
export { renderSite, writeRendered } from "../dist/gitops/render.js";
export { readSite } from "../dist/gitops/site-reader.js";
export { evaluateSite } from "../dist/synth/evaluate.js";
export { Inventory } from "../dist/synth/inventory/inventory.js";
export { mapHtml } from "../dist/synth/map/map-html.js";
export { siteMap } from "../dist/synth/map/site-map.js";
export { buildInventory } from "../dist/synth/inventory/load.js";
export { EMPTY_LOCK } from "../dist/synth/rules/lock.js";
export { renderPlan } from "../dist/synth/plan/render-plan.js";
export { readResources } from "../dist/synth/site/resources.js";
export { tuneHeapForReviews } from "../dist/webhook/heap.js";
export { jsonLogger } from "../dist/webhook/log.js";
export { startWebhook } from "../dist/webhook/main.js";
export { ReviewPool } from "../dist/webhook/review-pool.js";
export { SiteReviewer } from "../dist/webhook/site-review.js";
export { WebhookState } from "../dist/webhook/state.js";
