export { restart, state, stop } from '../interactive/control.js';
export { startSession as start } from '../interactive/start.js';
export { resume } from '../run/resume.js';
