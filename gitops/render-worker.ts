/**
 * A worker thread of {@link renderShare}: started by renderSite with the site's settings, it renders
 * each share of a plan it is sent and answers with the result, until it is terminated.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { renderShare, type PlanShare } from "./render.ts";

const settings: SiteSettings = workerData;
parentPort?.on("message", (share: PlanShare) => parentPort?.postMessage(renderShare(share, settings)));
