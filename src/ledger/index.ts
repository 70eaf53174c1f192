// The run ledger (.agents/): what the rest of agentbox may use.
export { activeDir, activeRunNames, markActive, unmarkActive } from './active.js';
export { type CreateRunInput, createRun, type RunHandle } from './create.js';
export { appendIndexEvent, foldIndex, makeIndexEvent, readIndexLog } from './index-log.js';
export { regenerateIndexMd, renderIndexMd } from './index-md.js';
export { POINTER_NAMES, type PointerName, pointerForStatus, setLatest, setPointer } from './links.js';
export { listRunNames, listRuns, type RunSummary } from './list.js';
export { configHash, readMeta } from './meta.js';
export { formatRunName, parseRunName, runIdOf, runRefProblem, slugify, validateRunRef } from './names.js';
export { compareRuns } from './order.js';
export { type Ledger, ledgerPaths, notAFolder, openLedger } from './paths.js';
export { fileSizes, listArtifacts, type RunDetails, readRun } from './read.js';
export { resolveRun } from './resolve.js';
export { ensureLedger } from './setup.js';
export { applyStatePatch, migrateState, readState, type StatePatch } from './state.js';
export type * from './types.js';
export { FAILURE_KINDS, RUN_STATUSES, RUN_TYPES } from './types.js';
export { HEARTBEAT_MS, heartbeat, reactivated, type StateEvent, updateState } from './update.js';
