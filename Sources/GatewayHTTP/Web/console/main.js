/*
 * The console's entry point, the one script console.html loads (type="module"): it imports the core and every
 * page, each of which registers itself, then starts the console. The navigation's order is the core's
 * (PAGE_ORDER), not the order of these imports.
 */
import { run } from './console.js';
import './overview.js';
import './payments.js';
import './webhooks.js';
import './processor.js';
import './card-data.js';
import './keys.js';
import './audit.js';

run();
