// The Maestro web UI: workflows, instances with a live DAG, definition
// previews, signal lineage, version diffs and backfills, on the API that serves it.

import "./style.css";
import { setRoutes, start } from "./router";
import { workflowsPage } from "./pages/workflows";
import { workflowPage } from "./pages/workflow";
import { instancePage } from "./pages/instance";
import { previewPage } from "./pages/preview";
import { signalsPage } from "./pages/signals";
import { diffPage } from "./pages/diff";
import { backfillPage } from "./pages/backfill";

setRoutes([
  { re: /^\/ui$/, page: () => workflowsPage() },
  { re: /^\/ui\/definitions\/preview$/, page: () => previewPage() },
  { re: /^\/ui\/signals$/, page: () => signalsPage() },
  { re: /^\/ui\/signals\/([^/]+)\/([^/]+)$/, page: (m) => signalsPage(m[0], m[1]) },
  { re: /^\/ui\/workflows\/([^/]+)$/, page: (m, q) => workflowPage(m[0], q.get("version") ?? "latest") },
  { re: /^\/ui\/workflows\/([^/]+)\/instances\/(\d+)$/, page: (m) => instancePage(m[0], Number(m[1])) },
  { re: /^\/ui\/workflows\/([^/]+)\/backfills\/([^/]+)$/, page: (m) => backfillPage(m[0], m[1]) },
  { re: /^\/ui\/workflows\/([^/]+)\/diff\/([^/]+)\/([^/]+)$/, page: (m) => diffPage(m[0], m[1], m[2]) },
]);
start();
