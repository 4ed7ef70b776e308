import { defineConfig } from 'vitest/config'

/**
 * Three tiers, each its own project: `unit` (pure modules: no store, no network, runs in
 * seconds), `api` (the app through `app.inject`, and the store beneath it, on every store) and
 * `process` (spawned servers and commands: crash, cluster, drain, slow clients), and `browser`
 * (the web console in a real browser).
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      // The floor: line coverage as measured with the evaluation runtime in (89.9% on SQLite
      // alone, 92.0% with PostgreSQL too), less 2 points.
      thresholds: { lines: 87 },
    },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'api',
          include: ['test/api/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: ['test/process/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        // The web console in Debian's Chromium against a spawned server (needs `npm run build`).
        extends: true,
        test: { name: 'browser', include: ['test/browser/**/*.test.ts'], testTimeout: 120_000 },
      },
    ],
  },
})
