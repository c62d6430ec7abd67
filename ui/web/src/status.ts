// Status names and the colour class each gets in tables, badges and the DAG.

const terminalWorkflow = new Set(["SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT"]);

/** workflowEnded reports whether an instance status is terminal. */
export function workflowEnded(status: string): boolean {
  return terminalWorkflow.has(status);
}

/** tone maps a workflow or step status to a colour class. */
export function tone(status: string | undefined): string {
  switch (status) {
    case "SUCCEEDED":
    case "COMPLETED":
      return "ok";
    case "FAILED":
    case "FATALLY_FAILED":
    case "USER_FAILED":
    case "PLATFORM_FAILED":
    case "INTERNALLY_FAILED":
    case "TIMED_OUT":
    case "TIMEOUT_FAILED":
      return "bad";
    case "RUNNING":
    case "IN_PROGRESS":
    case "STARTING":
    case "FINISHING":
    case "EVALUATING_PARAMS":
      return "run";
    case "STOPPED":
    case "KILLED":
    case "CANCELLED":
      return "stop";
    case "SKIPPED":
    case "DISABLED":
    case "UNSATISFIED":
      return "skip";
    case "PAUSED":
    case "WAITING_FOR_SIGNALS":
    case "WAITING_FOR_PERMITS":
    case "CREATED":
    case "INITIALIZED":
    case "QUEUED":
      return "wait";
    default:
      return "none";
  }
}
