export { startSession as start } from '../interactive/start.js';
export { resume } from '../run/resume.js';
