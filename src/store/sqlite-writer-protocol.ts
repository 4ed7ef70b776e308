import type { MessagePort } from 'node:worker_threads'

/**
 * What the event loop (`sqlite-writer.ts`) and the SQLite threads (`sqlite-writer-thread.js`,
 * `sqlite-checkpointer-thread.js`) say to each other.
 */

/** What the writer thread is started with (its `workerData`). */
export interface WriterThreadData {
  /** The database file, or `:memory:`. */
  path: string
  /**
   * Counters shared with the event loop and the checkpointer: [0] moves when a request has been
   * posted, [1] when the thread has posted the answer to a synchronous one, [2] with every
   * commit; [3] set asks the checkpointer to stop.
   */
  control: SharedArrayBuffer
  /** Requests from the event loop, one or several to a message. */
  requests: MessagePort
  /** Answers to synchronous requests, which the event loop takes with `receiveMessageOnPort`. */
  replies: MessagePort
  /** Answers to asynchronous requests (begin, commit, rollback, a statement on its own). */
  done: MessagePort
}

/** What the checkpointer thread is started with. */
export interface CheckpointerThreadData {
  path: string
  /** The writer's counters (`WriterThreadData.control`). */
  control: SharedArrayBuffer
  /** After this many commits the checkpointer checkpoints (PASSIVE). */
  checkpointCommits: number
  /** Past this many bytes of write-ahead log it checkpoints with TRUNCATE. */
  truncateBytes: number
}

/**
 * One request to the writer thread. Inside a transaction, the writes of a group commit are
 * segments: `segment` opens one (a savepoint), `send` runs a statement whose answer nobody waits
 * for, `end` releases the segment and `abort` rolls it back. A sent statement that fails rolls
 * its segment back at once, and every later statement of that segment answers with its error;
 * `commit` answers with the segments that failed so.
 */
export interface WriterRequest {
  id: number
  op:
    | 'open'
    | 'run'
    | 'first'
    | 'column'
    | 'send'
    | 'segment'
    | 'end'
    | 'abort'
    | 'begin'
    | 'commit'
    | 'rollback'
    | 'close'
  sql?: string
  parameters?: readonly unknown[]
  /**
   * `sync`: answered on `replies`; `async`: answered on `done` with the request's id; `none`: not
   * answered (its failure, if any, is its segment's).
   */
  answer: 'sync' | 'async' | 'none'
}

/** A segment that a sent statement failed, as the answer to `commit` lists it. */
export interface SegmentFailure {
  segment: number
  error: { name: string; message: string; code?: unknown }
}

/** The answer to a request: its value, or the error it raised (name, message and code kept). */
export type WriterAnswer =
  | { id: number; value: unknown }
  | { id: number; error: { name: string; message: string; code?: unknown } }
