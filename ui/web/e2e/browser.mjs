// The Chromium the UI's browser tests drive: $CHROMIUM (else
// /usr/bin/chromium), headless, with nothing that calls out.
import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

// reportFailure prints a failed run's error and, when shot names a file,
// saves a screenshot of the browser's first page there (best effort).
export async function reportFailure(browser, e, shot) {
  console.error("FAIL:", e?.message ?? e);
  const pages = browser.contexts().flatMap((c) => c.pages());
  if (pages.length && shot) await pages[0].screenshot({ path: shot, fullPage: true }).catch(() => {});
}
