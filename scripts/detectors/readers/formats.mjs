// The file formats the sources come in, read with libraries: CSV (csv-parse), Parquet
// (hyparquet, which decodes Snappy itself) and ZIP (fflate).
import { parse } from 'csv-parse/sync'
import { unzipSync } from 'fflate'
import { parquetReadObjects } from 'hyparquet'

/**
 * A CSV file's rows as objects keyed by the header's names (trimmed). A row with fewer fields
 * than the header has '' for the rest; blank lines are no rows.
 */
export function csvObjects(text) {
  const [header = [], ...rows] = parse(text, { relax_column_count: true })
  return rows
    .filter((r) => r.length > 1 || r[0] !== '')
    .map((r) => Object.fromEntries(header.map((h, i) => [h.trim(), r[i] ?? ''])))
}

/** A Parquet file's rows as objects keyed by column name (64-bit integers as BigInt). */
export async function parquetObjects(buf) {
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  return await parquetReadObjects({ file })
}

/** The files of a ZIP archive named in `names`, as Buffers by name. */
export function unzip(buf, names) {
  const wanted = new Set(names)
  const files = unzipSync(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), {
    filter: (f) => wanted.has(f.name),
  })
  const out = new Map()
  for (const name of names) {
    const data = files[name]
    if (!data) throw new Error(`${name} not in the archive`)
    out.set(name, Buffer.from(data.buffer, data.byteOffset, data.byteLength))
  }
  return out
}
