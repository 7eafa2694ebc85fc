import { writeFile } from "node:fs/promises";
import { mapHtml, mapFacts } from "../synth/map/map-html.ts";
import { siteMap, type MapInput } from "../synth/map/site-map.ts";

/** Where a map goes: a file, or standard output for `-`. */
export const MAP_TO_STDOUT = "-";

/**
 * Draws the map of an evaluated site and writes it to `file` (`metalsynth map`, `diff --map`), or
 * hands it to `stdout` when `file` is {@link MAP_TO_STDOUT}. Returns what the map shows, in one line.
 */
export async function writeSiteMap(
  file: string,
  input: MapInput,
  stdout: (text: string) => void,
): Promise<string> {
  const map = siteMap(input);
  const html = mapHtml(map);
  if (file === MAP_TO_STDOUT) stdout(html);
  else await writeFile(file, html);
  return mapFacts(map).join(", ");
}
