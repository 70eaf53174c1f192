/**
 * The stream-json `claude -p --output-format stream-json --verbose` prints, read in four steps:
 * bytes cut into lines (stream/lines.ts), each line parsed into events (stream/parse.ts, with the
 * usage and content blocks in stream/usage.ts and stream/content.ts), and the events folded into
 * a summary of the run (stream/summary.ts). Importers use this module.
 */
export type { ModelUsage, ResultEvent, StreamEvent, TokenUsage } from './stream/events.js';
export { LineSplitter } from './stream/lines.js';
export { parseStreamLine } from './stream/parse.js';
export { EMPTY_SUMMARY, type Refusal, type StreamSummary, summarize } from './stream/summary.js';
