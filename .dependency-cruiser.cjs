/**
 * The layers of src/, checked by `npm run lint` (dependency-cruiser): a request flows
 * routes → services → store, and nothing imports a layer above it; the evaluation runtime
 * (src/evaluation/) sits below the services, above src/rules/. src/rules/ (evaluation) is
 * pure: it reads no file, socket or store, and is handed what it needs (the judge, the
 * classifiers). See README ("Development").
 */
// node:net is not here: the pii detector reads addresses with its pure isIPv4 and isIPv6.
const IO_MODULES = '^(node:)?(fs|fs/promises|http|https|http2|child_process|dgram|worker_threads|cluster)$'
const IO_PACKAGES = '^(better-sqlite3|pg|ioredis|fastify|@fastify/|undici|kysely)'

const forbid = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to })

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'A module never imports itself back through others: each layer is read before the ones above it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    forbid(
      'rules-are-pure',
      'src/rules/ evaluates: no HTTP, SQL, files or sockets, and no layer above it.',
      '^src/rules/',
      {
        path: [
          '^src/(store|services|evaluation|routes|http|proxy|models|net)/',
          '^src/(app|server|cli)\\.ts$',
          IO_MODULES,
          IO_PACKAGES,
        ],
      },
    ),
    forbid(
      'judge-below-services',
      'The judge is called by evaluation and built by services; it knows neither.',
      '^src/judge/',
      { path: ['^src/(store|services|evaluation|routes|http|proxy|models)/', '^src/(app|server|cli)\\.ts$'] },
    ),
    forbid('store-below-services', 'Repositories never see a service, a route or HTTP.', '^src/store/', {
      path: [
        '^src/(services|evaluation|routes|http|proxy|rules|judge|models)/',
        '^src/(app|server|cli)\\.ts$',
      ],
    }),
    forbid(
      'evaluation-below-services',
      'The evaluation runtime (cost, pool, worker) is used by services and knows none of them.',
      '^src/evaluation/',
      {
        path: ['^src/(store|services|routes|http|proxy)/', '^src/(app|server|cli)\\.ts$'],
      },
    ),
    forbid('services-below-routes', 'Services never see a route or the HTTP layer.', '^src/services/', {
      path: ['^src/(routes|http)/', '^src/(app|server|cli)\\.ts$'],
    }),
    forbid('routes-call-services', 'A route never sees SQL: it calls services.', '^src/routes/', {
      path: ['^src/store/'],
    }),
    forbid('proxy-below-services', 'The upstream client and its pure parts know no service.', '^src/proxy/', {
      path: ['^src/(services|evaluation|routes|http|store)/', '^src/(app|server|cli)\\.ts$'],
    }),
    forbid('schemas-are-shapes', 'Schemas describe; they call nothing.', '^src/schemas/', {
      path: ['^src/(services|evaluation|routes|http|store|proxy|rules|judge|models|net)/'],
    }),
    forbid(
      'guards-below-services',
      'Guard detectors are called by evaluation and built by services; they know neither.',
      '^src/guards/',
      {
        // Of the rules, a guard's configuration knows only the cascade's band, a leaf.
        path: [
          '^src/(store|services|routes|http|proxy|models|judge)/',
          '^src/rules/(?!band\\.ts$)',
          '^src/(app|server|cli)\\.ts$',
        ],
      },
    ),
    forbid(
      'scoring-is-a-leaf',
      'The Scorer interface and its cached calls are shared by the judge and the guards; they know neither.',
      '^src/scoring/',
      { path: ['^src/(?!scoring/)'] },
    ),
    forbid('net-is-a-leaf', 'The outbound HTTP client depends on nothing of Warden.', '^src/net/', {
      path: ['^src/(?!errors\\.ts)'],
    }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
}
