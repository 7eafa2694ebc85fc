/**
 * Which Node.js versions metalsynth runs on, checked by `bin/metalsynth.js` before the CLI is loaded
 * (issue #41): the range of package.json's `engines`, which `supported-node.test.ts` holds them to.
 * It imports nothing, so an old Node.js reaches the message instead of failing somewhere in a module.
 */

/**
 * Why `version` (`process.versions.node`, e.g. `20.20.2`) can't run metalsynth, in one line, or
 * `undefined` when it can: 22.12 or a later 22, or 24.
 */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if ((major === 22 && minor >= 12) || major === 24) return undefined;
  return `metalsynth needs Node.js 24 (or 22.12 and later 22.x); this is Node.js ${version}: see .nvmrc, or install one with nvm install`;
}
