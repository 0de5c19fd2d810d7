/** The certificate controllers: approver, signer, cleaner, and the serving trust-bundle publisher. */
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import { approvingController } from './approving/controller.ts';
import { cleanerController } from './cleaner/controller.ts';
import { signingController } from './signing/controller.ts';
import { publisherController } from './trustbundle/controller.ts';

export type { CertificatesConfig } from './config.ts';

export const certificateControllers: ControllerDefinition[] = [
  approvingController,
  signingController,
  cleanerController,
  publisherController,
];
