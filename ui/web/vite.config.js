// Vite builds the UI into ../dist, which package ui embeds in the Go binaries
// and the API serves at /ui/.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/ui/",
  build: {
    outDir: "../dist",
    emptyOutDir: true,
    // No source maps: the assets ship inside the API binary.
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
});
