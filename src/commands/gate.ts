export { startSession as start } from '../interactive/start.js';
