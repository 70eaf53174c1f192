export { diff } from '../review/diff.js';
