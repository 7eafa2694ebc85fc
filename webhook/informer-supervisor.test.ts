/**
 * The informer supervisor against fake informers: what it does when lists fail, watches go silent
 * and informers are replaced, without an API server.
 */
import {
  ADD,
  ApiException,
  DELETE,
  ERROR,
  type KubernetesListObject,
  type KubernetesObject,
  type ListPromise,
} from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  InformerSupervisor,
  type CachingInformer,
  type InformerEvents,
  type SupervisedResource,
} from "./informer-supervisor.ts";
import { jsonLogger } from "./log.ts";

/** An informer that lists with the function it is given and reports what it lists as added. */
class FakeInformer implements CachingInformer {
  readonly #handlers = new Map<string, ((value?: unknown) => void)[]>();
  #objects: readonly KubernetesObject[] = [];
  starts = 0;
  stopped = false;

  constructor(
    readonly path: string,
    readonly listFn: ListPromise<KubernetesObject>,
    readonly labelSelector?: string,
  ) {}

  on(verb: string, callback: (value: never) => void): void {
    this.#handlers.set(verb, [...(this.#handlers.get(verb) ?? []), callback as (value?: unknown) => void]);
  }

  off(): void {}

  /** Like client-node's informer: a failed list is reported as an error, not thrown. */
  async start(): Promise<void> {
    this.starts += 1;
    try {
      this.#objects = (await this.listFn()).items;
    } catch (error) {
      this.emit(ERROR, error);
      return;
    }
    for (const object of this.#objects) this.emit(ADD, object);
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  /**
   * What client-node does when its watch hears 410 Gone: lists again, inside the same informer, and
   * reports what left as deleted and the rest as added.
   */
  async relist(): Promise<void> {
    const before = this.#objects;
    this.#objects = (await this.listFn()).items;
    const names = new Set(this.#objects.map((listed) => listed.metadata?.name));
    for (const gone of before.filter((listed) => !names.has(listed.metadata?.name))) this.emit(DELETE, gone);
    for (const listed of this.#objects) this.emit(ADD, listed);
  }

  emit(verb: string, value?: unknown): void {
    for (const handler of this.#handlers.get(verb) ?? []) handler(value);
  }

  get(name: string, namespace?: string): KubernetesObject | undefined {
    return this.#objects.find(
      (object) => object.metadata?.name === name && object.metadata.namespace === namespace,
    );
  }

  list(): readonly KubernetesObject[] {
    return this.#objects;
  }
}

const object = (name: string): KubernetesObject => ({ metadata: { name, namespace: "metal3" } });

/** A resource whose list answers `answers` in turn (an Error fails), then the last one forever. */
function resource(name: string, ...answers: (KubernetesObject[] | Error)[]): SupervisedResource {
  let calls = 0;
  return {
    name,
    path: `/apis/example.io/v1/${name}`,
    labelSelector: "a=b",
    async list(): Promise<KubernetesListObject<KubernetesObject>> {
      const answer = answers[Math.min(calls, answers.length - 1)] ?? [];
      calls += 1;
      if (answer instanceof Error) throw answer;
      return { metadata: {}, items: answer };
    },
  };
}

/** How long a test waits for a retry or a replacement to happen. */
const PATIENCE = { timeout: 5_000, interval: 5 };

let supervisor: InformerSupervisor<SupervisedResource> | undefined;

afterEach(async () => {
  await supervisor?.close();
  supervisor = undefined;
});

/** A supervisor over fake informers, with what it made, logged and told. */
function supervise(options: { clock?: () => number; watchTimeoutSeconds?: number } = {}) {
  const informers: FakeInformer[] = [];
  const logs: { msg: string; [field: string]: unknown }[] = [];
  const told: string[] = [];
  const events: InformerEvents<SupervisedResource> = {
    contact: (watched) => told.push(`contact ${watched.name}`),
    changed: (watched, changed) => told.push(`changed ${watched.name} ${changed.metadata?.name}`),
    relisting: (watched) => told.push(`relisting ${watched.name}`),
    started: (watched) => told.push(`started ${watched.name}`),
    listed: (watched) => told.push(`listed ${watched.name}`),
  };
  supervisor = new InformerSupervisor({
    makeInformer: (path, list, labelSelector) => {
      const informer = new FakeInformer(path, list, labelSelector);
      informers.push(informer);
      return informer;
    },
    events,
    log: jsonLogger((line) => logs.push(JSON.parse(line))),
    retryDelayMs: 10,
    ...options,
  });
  return { supervisor, informers, logs, told };
}

describe("InformerSupervisor", () => {
  it("starts one informer per resource, watching with the server-side timeout, and tells what it lists", async () => {
    const hosts = resource("hosts", [object("node-1"), object("node-2")]);
    const secrets = resource("secrets", []);
    const { supervisor, informers, told } = supervise({ watchTimeoutSeconds: 7 });

    await supervisor.start([hosts, secrets]);

    expect(informers.map((informer) => [informer.path, informer.labelSelector])).toEqual([
      ["/apis/example.io/v1/hosts?timeoutSeconds=7&allowWatchBookmarks=true", "a=b"],
      ["/apis/example.io/v1/secrets?timeoutSeconds=7&allowWatchBookmarks=true", "a=b"],
    ]);
    expect(supervisor.listed()).toBe(true);
    expect(supervisor.problems()).toEqual([]);
    expect(supervisor.cache(hosts)?.get("node-2", "metal3")).toEqual(object("node-2"));
    // Each resource's events in order (the two informers start side by side).
    expect(told.filter((event) => event.includes(" hosts"))).toEqual([
      "contact hosts",
      "changed hosts node-1",
      "contact hosts",
      "changed hosts node-2",
      "contact hosts",
      "started hosts",
    ]);
    expect(told.filter((event) => event.includes(" secrets"))).toEqual([
      "contact secrets",
      "started secrets",
    ]);
  });

  it("reports a failed list, retries at once and then with backoff, and recovers", async () => {
    const body = JSON.stringify({ kind: "Status", message: "etcd is sad" });
    const failure = new ApiException(500, "HTTP-Code: 500\nMessage: …", body, {});
    const hosts = resource("hosts", failure, failure, [object("node-1")]);
    const { supervisor, informers, logs, told } = supervise();

    await supervisor.start([hosts]);

    expect(supervisor.listed()).toBe(false);
    expect(supervisor.problems()).toEqual(["hosts: list failed: 500 etcd is sad"]);
    await expect.poll(() => supervisor.listed() && supervisor.problems().length === 0, PATIENCE).toBe(true);
    expect(informers).toHaveLength(1);
    expect(informers[0]?.starts).toBe(3);
    expect(logs.filter((line) => line.msg === "watch failed").map((line) => line.retryMs)).toEqual([0, 10]);
    expect(logs.map((line) => line.msg)).toContain("watch recovered");
    expect(told.filter((event) => event.startsWith("started"))).toEqual(["started hosts"]);
  });

  it("reports a watch that failed after the list until it is watching again", async () => {
    const hosts = resource("hosts", [object("node-1")]);
    const { supervisor, informers } = supervise();
    await supervisor.start([hosts]);

    informers[0]?.emit(ERROR, Object.assign(new Error("connection reset"), { statusCode: 502 }));

    expect(supervisor.problems()).toEqual(["hosts: watch failed, retrying: 502 connection reset"]);
    await expect.poll(() => supervisor.problems(), PATIENCE).toEqual([]);
  });

  it("replaces an informer whose watch went silent, and tells the owner to expect a fresh list", async () => {
    let now = 0;
    const hosts = resource("hosts", [object("node-1")]);
    const { supervisor, informers, logs, told } = supervise({ clock: () => now, watchTimeoutSeconds: 1 });
    await supervisor.start([hosts]);

    now = 2_001;
    expect(supervisor.problems()).toEqual(["hosts: nothing from the API server for 2s (stale watch)"]);
    await expect
      .poll(() => informers.length === 2 && supervisor.problems().length === 0, PATIENCE)
      .toBe(true);

    expect(informers[0]?.stopped).toBe(true);
    expect(supervisor.cache(hosts)).toBe(informers[1]);
    expect(told).toContain("relisting hosts");
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: "watch stale; listing again", resource: "hosts" }),
    );
    // What the replaced informer still reports is not heard.
    const before = told.length;
    informers[0]?.emit(ADD, object("ghost"));
    expect(told.length).toBe(before);
  });

  it("counts a list inside the watch (410 Gone) as a problem from its start until it is delivered", async () => {
    let release: (items: KubernetesObject[]) => void = () => {};
    let calls = 0;
    const hosts: SupervisedResource = {
      name: "hosts",
      path: "/apis/example.io/v1/hosts",
      list: async () => {
        calls += 1;
        const items =
          calls === 1
            ? [object("node-1"), object("node-2")]
            : await new Promise<KubernetesObject[]>((resolve) => (release = resolve));
        return { metadata: {}, items };
      },
    };
    const { supervisor, informers, logs, told } = supervise();
    await supervisor.start([hosts]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toContain("listed hosts");
    told.length = 0;

    const relisted = informers[0]?.relist();
    await expect.poll(() => calls).toBe(2);
    expect(supervisor.listed()).toBe(false);
    expect(supervisor.problems()).toEqual([
      "hosts: listing again: its watch lost its place in the API server's history",
    ]);
    release([object("node-1")]);
    await relisted;
    // Applied, and the deletion told, but not yet delivered to the owner: still a problem.
    expect(told.filter((event) => event.startsWith("changed"))).toEqual([
      "changed hosts node-2",
      "changed hosts node-1",
    ]);
    expect(supervisor.problems()).not.toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(told.at(-1)).toBe("listed hosts");
    expect(supervisor.listed()).toBe(true);
    expect(supervisor.problems()).toEqual([]);
    expect(logs.map((line) => line.msg)).toEqual(expect.arrayContaining(["listing again", "listed again"]));
  });

  it("stops every informer on close and reports nothing after", async () => {
    const hosts = resource("hosts", [object("node-1")]);
    const { supervisor, informers, told } = supervise();
    await supervisor.start([hosts]);

    await supervisor.close();

    expect(informers.every((informer) => informer.stopped)).toBe(true);
    const before = told.length;
    informers[0]?.emit(ADD, object("late"));
    expect(told.length).toBe(before);
  });
});
