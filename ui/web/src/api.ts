// The API client: every call goes to the same origin's /api/v3 (the API that
// serves the UI), and a failed call throws an ApiError carrying the API's
// message and field errors.

export interface Timeline {
  timestamp: number;
  status?: string;
  message: string;
}

export interface Rollup {
  total_leaf_count: number;
  overview?: Record<string, { cnt: number }>;
}

export interface Parent {
  workflow_id: string;
  workflow_instance_id: number;
  workflow_run_id: number;
  step_id: string;
  step_attempt_id: number;
  index?: number;
}

// Backfill is a backfill of a workflow's time-trigger firings and its
// progress (orchestrator.BackfillView).
export interface Backfill {
  workflow_id: string;
  backfill_id: string;
  workflow_version_id: number;
  from: string;
  to: string;
  concurrency: number;
  priority: string;
  status: string;
  total: number;
  admitted: number;
  running: number;
  pending: number;
  counts: Record<string, number>;
  next_firing?: string;
  eta_seconds?: number;
  create_time: number;
  end_time?: number;
  principal?: string;
}

export interface Instance {
  workflow_id: string;
  workflow_instance_id: number;
  workflow_run_id: number;
  workflow_version_id: number;
  workflow_uuid?: string;
  status: string;
  initiator?: { type: string; principal?: string; parent?: Parent; signal?: unknown; backfill?: string; scheduled_time?: number; [k: string]: unknown };
  params?: Record<string, unknown>;
  create_time?: number;
  start_time?: number;
  end_time?: number;
  modify_time?: number;
  runtime_overview?: { total_step_count: number; step_overview?: Record<string, number>; run_status?: string };
  rollup_overview?: Rollup;
  timeline?: Timeline[];
  step_statuses?: Record<string, string>;
  cost?: Cost;
}

// Cost is what a run (its tree) or a step attempt was billed for, priced;
// covers names the kinds of cost the total includes.
export interface Cost {
  total_usd: number;
  parts: Record<string, { count: number; usd: number }>;
  covers: string[];
  prices_of: string;
}

export interface LoopSummary {
  foreach_workflow_id?: string;
  while_workflow_id?: string;
  loop_param_values?: Record<string, unknown>;
  total_loop_count: number;
  next_loop_index: number;
  running_count: number;
  status_counts?: Record<string, number>;
  running_iterations?: number[];
  rollup?: Rollup;
}

// LoopEstimate is a large foreach attempt's expected duration and cost,
// from iterations that already ran (absent below the stack's threshold).
export interface LoopEstimate {
  iterations: number;
  steps: number;
  concurrency: number;
  waves: number;
  from: string;
  duration: { sample: number; p50_ms: number; p90_ms: number } | null;
  duration_reason?: string;
  cost: { sample: number; p50_usd: number; p90_usd: number; covers: string[] } | null;
  cost_reason?: string;
}

export interface ChildRef {
  subworkflow_id: string;
  subworkflow_instance_id: number;
  subworkflow_run_id: number;
  subworkflow_version_id: number;
  ended?: boolean;
  rollup?: Rollup;
}

export interface Step {
  workflow_id: string;
  workflow_instance_id: number;
  workflow_run_id: number;
  step_id: string;
  step_attempt_id: number;
  step_type?: string;
  params?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  runtime_state: { status: string; create_time?: number; start_time?: number; end_time?: number; modify_time?: number };
  foreach_overview?: LoopSummary;
  foreach_estimate?: LoopEstimate;
  while_overview?: LoopSummary;
  subworkflow_overview?: ChildRef;
  timeline?: Timeline[];
}

export interface WorkflowSummary {
  workflow_id: string;
  latest_version_id: number;
  active_version_id: number;
  instance_count: number;
  properties_snapshot?: Record<string, unknown>;
  create_time: number;
  modify_time: number;
}

/** StepDef is one entry of a definition's steps: one key naming its kind. */
export type StepDef = Record<string, StepBody>;

export interface StepBody {
  id: string;
  name?: string;
  type?: string;
  params?: Record<string, unknown>;
  transition?: { successors?: Record<string, string> };
  steps?: StepDef[];
  [k: string]: unknown;
}

export interface WorkflowDef {
  id: string;
  name?: string;
  description?: string;
  steps: StepDef[];
  params?: Record<string, unknown>;
  time_triggers?: unknown[];
  signal_triggers?: unknown[];
  [k: string]: unknown;
}

export interface Definition {
  properties_snapshot?: Record<string, unknown>;
  metadata: { workflow_id: string; workflow_version_id: number; create_time: number; version_author?: { name: string } };
  workflow: WorkflowDef;
  is_active: boolean;
  is_latest: boolean;
  is_default: boolean;
}

/** DiffChange is one changed value: from is absent when added, to when removed. */
export interface DiffChange {
  path: string;
  field?: string;
  from?: unknown;
  to?: unknown;
}

/** DiffStep is a step added, removed or changed between two versions. */
export interface DiffStep {
  step_id: string;
  kind: string;
  type?: string;
  path: string;
  parents?: string[];
  from_path?: string;
  from_parents?: string[];
  moved?: boolean;
  changes?: DiffChange[];
}

/** DiffEdge is a transition from a step to a successor. */
export interface DiffEdge {
  from: string;
  to: string;
  condition: string;
  from_condition?: string;
}

/** DiffParam is a workflow param added, removed or changed. */
export interface DiffParam {
  name: string;
  path: string;
  value?: unknown;
  changes?: DiffChange[];
}

type Lists<T> = { added: T[]; removed: T[]; changed: T[] };

/** VersionDiff is GET /api/v3/workflows/{id}/versions/{a}/diff/{b}. */
export interface VersionDiff {
  workflow_id: string;
  from: number;
  to: number;
  steps: Lists<DiffStep>;
  edges: Lists<DiffEdge>;
  params: Lists<DiffParam>;
  workflow: DiffChange[];
  properties: DiffChange[];
  truncated: boolean;
  limit: number;
}

/** AccessView is a workflow's grant and the caller's role on it (GET /api/v3/workflows/{id}/access). */
export interface AccessView {
  workflow_id: string;
  owners: string[];
  operators: string[];
  readers: string[];
  role: string;
  enforced: boolean;
}

/** ApiError is a failed call: the HTTP status and the API's JSON error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: string[] = [],
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown, raw?: string): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json" } };
  if (raw !== undefined) {
    init.body = raw;
    init.headers = { ...init.headers, "Content-Type": "application/json" };
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "Content-Type": "application/json" };
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: reported below if the status is an error
  }
  if (!res.ok) {
    const e = (data ?? {}) as { message?: string; errors?: string[] };
    throw new ApiError(res.status, e.message ?? `${method} ${path}: HTTP ${res.status}`, e.errors ?? []);
  }
  return data as T;
}

const enc = encodeURIComponent;
const wf = (id: string) => `/api/v3/workflows/${enc(id)}`;

export const api = {
  workflows: (cursor = "", limit = 100) =>
    call<{ workflows: WorkflowSummary[]; next_cursor?: string }>("GET", `/api/v3/workflows?limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  version: (id: string, version: string | number) => call<Definition>("GET", `${wf(id)}/versions/${version}`),
  diff: (id: string, from: string | number, to: string | number) => call<VersionDiff>("GET", `${wf(id)}/versions/${enc(String(from))}/diff/${enc(String(to))}`),
  instances: (id: string, status = "", cursor = "", limit = 25) =>
    call<{ workflow_instances: Instance[]; next_cursor?: string }>(
      "GET",
      `${wf(id)}/instances?limit=${limit}${status ? `&status=${status}` : ""}${cursor ? `&cursor=${enc(cursor)}` : ""}`,
    ),
  backfills: (id: string) => call<{ backfills: Backfill[] }>("GET", `${wf(id)}/backfills`),
  backfill: (id: string, bid: string) => call<Backfill>("GET", `${wf(id)}/backfills/${enc(bid)}`),
  backfillAction: (id: string, bid: string, action: string) => call<Backfill>("PUT", `${wf(id)}/backfills/${enc(bid)}/actions/${action}`),
  backfillPriority: (id: string, bid: string, priority: string) => call<Backfill>("PUT", `${wf(id)}/backfills/${enc(bid)}`, { priority }),
  instance: (id: string, n: number) => call<Instance>("GET", `${wf(id)}/instances/${n}`),
  run: (id: string, n: number, run: number) => call<Instance>("GET", `${wf(id)}/instances/${n}/runs/${run}`),
  steps: (id: string, n: number) => call<Step[]>("GET", `${wf(id)}/instances/${n}/steps`),
  attempt: (id: string, n: number, run: number, step: string, attempt: number | "latest") =>
    call<Step>("GET", `${wf(id)}/instances/${n}/runs/${run}/steps/${enc(step)}/attempts/${attempt}`),
  start: (id: string, version = "latest") => call<Instance>("POST", `${wf(id)}/versions/${version}/actions/start`, {}),
  instanceAction: (id: string, n: number, action: string) => call<Instance>("PUT", `${wf(id)}/instances/${n}/actions/${action}`),
  restartInstance: (id: string, n: number) => call<Instance>("POST", `${wf(id)}/instances/${n}/actions/restart`, {}),
  stepAction: (id: string, n: number, step: string, action: string) => call<unknown>("PUT", `${wf(id)}/instances/${n}/steps/${enc(step)}/actions/${action}`),
  restartStep: (id: string, n: number, step: string) => call<Instance>("POST", `${wf(id)}/instances/${n}/steps/${enc(step)}/actions/restart`, {}),
  resumeStep: (id: string, n: number, run: number, step: string, attempt: number) =>
    call<unknown>("PUT", `/api/v3/workflows/steps/breakpoints/${enc(id)}/instances/${n}/runs/${run}/steps/${enc(step)}/attempts/${attempt}/actions/resume`),
  validate: (definition: string) => call<unknown>("PUT", "/api/v3/workflows/actions/validate", undefined, definition),
  push: (definition: string) => call<{ workflow_definition: Definition }>("POST", "/api/v3/workflows", undefined, definition),
  access: (id: string) => call<AccessView>("GET", `${wf(id)}/access`),
  instanceActionMap: () => call<Record<string, string[]>>("GET", "/api/v3/workflows/instances/action-map"),
  stepActionMap: () => call<Record<string, string[]>>("GET", "/api/v3/workflows/steps/instances/action-map"),
  signal: (name: string, seq: string) => call<Record<string, unknown>>("GET", `/api/v3/signals/${enc(name)}/instances/${enc(seq)}`),
  lineage: (name: string, seq: string) => call<Record<string, unknown>>("GET", `/api/v3/signals/${enc(name)}/instances/${enc(seq)}/lineage`),
};
