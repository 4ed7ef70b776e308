import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One span as OTLP/HTTP's JSON encoding carries it, its attributes read into plain values. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  /** The span's events (an exception is one), their attributes read alike. */
  events: { name: string; attributes: Record<string, unknown> }[]
  /** `code`: 0 unset, 1 ok, 2 error; `message` as sent, if any. */
  status: { code?: number; message?: string }
  resource: Record<string, unknown>
}

interface AnyValue {
  stringValue?: string
  intValue?: string | number
  doubleValue?: number
  boolValue?: boolean
  arrayValue?: { values?: AnyValue[] }
}
type KeyValue = { key: string; value: AnyValue }

const plainValue = (v: AnyValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values?.map(plainValue)

const attributesOf = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plainValue(kv.value)]))

/**
 * A small OTLP/HTTP receiver on 127.0.0.1, as the OTLP specification describes it: `POST
 * /v1/traces` with an ExportTraceServiceRequest in JSON, answered 200 with an
 * ExportTraceServiceResponse. Tests wait for the spans they expect with `spanNamed`.
 */
export async function startOtlpReceiver(): Promise<{
  url: string
  spans: ReceivedSpan[]
  /** Every export request's body as it came, to look for what no span may hold. */
  bodies: string[]
  /** Resolves with the first span named `name`, as soon as one arrives. */
  spanNamed(name: string): Promise<ReceivedSpan>
  /** Resolves with the first span `test` accepts, as soon as one arrives. */
  spanWhere(test: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan>
  close(): Promise<void>
}> {
  const spans: ReceivedSpan[] = []
  const bodies: string[] = []
  const waiting: { test: (span: ReceivedSpan) => boolean; resolve: (span: ReceivedSpan) => void }[] = []
  const spanWhere = (test: (span: ReceivedSpan) => boolean) => {
    const found = spans.find(test)
    if (found) return Promise.resolve(found)
    return new Promise<ReceivedSpan>((resolve) => waiting.push({ test, resolve }))
  }
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString('utf8')
  }
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end()
      return
    }
    read(req).then((body) => {
      bodies.push(body)
      const payload = JSON.parse(body) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] }
          scopeSpans?: {
            spans?: (Omit<ReceivedSpan, 'attributes' | 'events' | 'resource'> & {
              attributes?: KeyValue[]
              events?: { name: string; attributes?: KeyValue[] }[]
            })[]
          }[]
        }[]
      }
      for (const rs of payload.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes)
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) {
            const span: ReceivedSpan = {
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
              status: s.status ?? {},
              resource,
            }
            spans.push(span)
            for (const w of waiting.filter((w) => w.test(span))) {
              waiting.splice(waiting.indexOf(w), 1)
              w.resolve(span)
            }
          }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    spanNamed: (name) => spanWhere((s) => s.name === name),
    spanWhere,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
