/**
 * Tells when files change: the inventory and site files the webhook serves from, and the TLS
 * certificate cert-manager rotates. `fs.watch` alone misses changes (Kubernetes updates a mounted
 * Secret or ConfigMap by swapping a symlinked directory, and some file systems send no events at
 * all), so a periodic check backs it up. Either only *triggers* a comparison of the files' sizes,
 * modification times and inodes with the last ones seen; the callback runs only when those differ.
 */
import { statSync, watch, type FSWatcher } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/** Options of {@link watchPaths}. */
export interface WatchOptions {
  /**
   * Milliseconds between periodic checks.
   * @default 5000
   */
  readonly pollMs?: number;
  /**
   * Milliseconds to wait after a file system event before checking, so that a writer's burst of
   * events (truncate, write, rename) leads to one check.
   * @default 200
   */
  readonly debounceMs?: number;
}

/** A running watch. */
export interface PathWatch {
  close(): void;
}

/**
 * Calls `onChange` whenever a file at or below `paths` (files or directories, which need not exist
 * yet) is added, removed or changed. Calls never overlap: a change during a running callback leads
 * to one more check after it. `onChange` handles its own failures; a rejection would go unhandled.
 */
export function watchPaths(
  paths: readonly string[],
  onChange: () => Promise<void>,
  options: WatchOptions = {},
): PathWatch {
  const absolute = paths.map((given) => path.resolve(given));
  const debounceMs = options.debounceMs ?? 200;
  let last: Promise<string> = fingerprint(absolute);
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let debounce: NodeJS.Timeout | undefined;

  const check = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        const previous = await last;
        const current = fingerprint(absolute);
        last = current;
        if (!closed && (await current) !== previous) await onChange();
      } while (again && !closed);
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
  };
  const soon = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void check(), debounceMs);
  };

  const watchers: FSWatcher[] = [];
  for (const directory of new Set(absolute.map(watchedDirectory))) {
    try {
      const watcher = watch(directory, { persistent: false }, soon);
      // A watched directory that disappears is the periodic check's to notice.
      watcher.on("error", () => watcher.close());
      watchers.push(watcher);
    } catch {
      // The directory does not exist yet: the periodic check notices when it appears.
    }
  }
  // Like the fs watchers (persistent: false), the poll never keeps the process alive on its own.
  const poll = setInterval(() => void check(), options.pollMs ?? 5000).unref();

  return {
    close() {
      closed = true;
      clearTimeout(debounce);
      clearInterval(poll);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** The directory whose events concern `target`: itself when it is one, else its parent. */
function watchedDirectory(target: string): string {
  return statSync(target, { throwIfNoEntry: false })?.isDirectory() ? target : path.dirname(target);
}

/** Size, modification time and inode of every file at or below `paths`, in a stable order. */
async function fingerprint(paths: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const target of paths) {
    const info = await stat(target).catch(() => undefined);
    if (info === undefined) {
      lines.push(`${target} absent`);
    } else if (info.isDirectory()) {
      const entries = await readdir(target, { recursive: true }).catch(() => []);
      for (const entry of entries.sort()) {
        const file = path.join(target, entry);
        const entryInfo = await stat(file).catch(() => undefined);
        if (entryInfo?.isFile())
          lines.push(`${file} ${entryInfo.size} ${entryInfo.mtimeMs} ${entryInfo.ino}`);
      }
    } else {
      lines.push(`${target} ${info.size} ${info.mtimeMs} ${info.ino}`);
    }
  }
  return lines.join("\n");
}
