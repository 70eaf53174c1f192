export { discard, merge } from '../run/gate.js';
export { inject } from '../run/inject.js';
export { resume } from '../run/resume.js';
