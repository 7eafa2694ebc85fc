/**
 * The lock's file name, apart from the lock's reader and writer: a synth that takes its evaluation
 * from the cache reads and writes the lock without loading them (decision 0066).
 */

/** The file name of the lock inside `rendered/`. */
export const LOCK_FILE = "metalsynth.lock.yaml";
