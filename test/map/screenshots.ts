import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PNG } from "pngjs";

/**
 * How far a screenshot may stray from its reviewed reference. Text anti-aliasing and font hinting
 * move a few pixels between Chromium builds; a changed colour, pattern, tile or line of text moves
 * thousands. A pixel differs when one of its channels is off by more than `channel` (of 255); the
 * picture matches while at most `share` of its pixels differ (pixels outside the smaller of two
 * sizes all count as different).
 */
export const TOLERANCE = { channel: 16, share: 0.002 } as const;

/**
 * Compares a PNG screenshot with the reference at `reference`, or, with `UPDATE_SCREENSHOTS=1`,
 * replaces the reference with it (review the new picture like code before committing it). On a
 * mismatch the screenshot and a picture of the differing pixels (red) are written to a temporary
 * directory named in the error.
 */
export async function expectScreenshot(actual: Buffer, reference: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    await writeFile(reference, actual);
    return;
  }
  let expectedBytes: Buffer;
  try {
    expectedBytes = await readFile(reference);
  } catch {
    throw new Error(
      `no reference screenshot ${reference}: run UPDATE_SCREENSHOTS=1 npm run test:slow and review it`,
    );
  }
  const expected = PNG.sync.read(expectedBytes);
  const got = PNG.sync.read(actual);
  const width = Math.min(expected.width, got.width);
  const height = Math.min(expected.height, got.height);
  const total = Math.max(expected.width, got.width) * Math.max(expected.height, got.height);
  const marks = new PNG({ width: got.width, height: got.height });
  let differing = total - width * height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const a = (y * expected.width + x) * 4;
      const b = (y * got.width + x) * 4;
      let worst = 0;
      for (let channel = 0; channel < 3; channel++)
        worst = Math.max(worst, Math.abs((expected.data[a + channel] ?? 0) - (got.data[b + channel] ?? 0)));
      const m = (y * got.width + x) * 4;
      const off = worst > TOLERANCE.channel;
      if (off) differing++;
      marks.data[m] = off ? 255 : (got.data[b] ?? 0) >> 2;
      marks.data[m + 1] = off ? 0 : (got.data[b + 1] ?? 0) >> 2;
      marks.data[m + 2] = off ? 0 : (got.data[b + 2] ?? 0) >> 2;
      marks.data[m + 3] = 255;
    }
  }
  if (differing <= total * TOLERANCE.share) return;
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-screenshot-"));
  const name = path.basename(reference, ".png");
  await writeFile(path.join(dir, `${name}.actual.png`), actual);
  await writeFile(path.join(dir, `${name}.diff.png`), PNG.sync.write(marks));
  throw new Error(
    `screenshot differs from ${reference}: ${differing} of ${total} pixels ` +
      `(${((differing / total) * 100).toFixed(2)}%, tolerance ${TOLERANCE.share * 100}%); ` +
      `sizes ${expected.width}×${expected.height} → ${got.width}×${got.height}; ` +
      `the screenshot and its differences are in ${dir}. If the change is intended, ` +
      `UPDATE_SCREENSHOTS=1 npm run test:slow replaces the reference (review it).`,
  );
}
