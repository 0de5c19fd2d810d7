/** Coordinated leader election: the election controller and the LeaseCandidate garbage collector. */
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import { electionController } from './controller.ts';
import { leaseCandidateGcController } from './gc.ts';

export type { LeaseCandidateGcConfig } from './gc.ts';

export const leaderElectionControllers: ControllerDefinition[] = [electionController, leaseCandidateGcController];
