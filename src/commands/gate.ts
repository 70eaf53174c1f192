export { discard, merge } from '../run/gate.js';
export { resume } from '../run/resume.js';
