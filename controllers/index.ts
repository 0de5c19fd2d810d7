/** Every controller the daemon can run: the CLI selects from this list with `--controllers`. */
import type { ControllerDefinition } from '../src/controller/controller.ts';

export const controllerDefinitions: ControllerDefinition[] = [];
