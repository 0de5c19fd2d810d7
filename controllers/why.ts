/** Every controller's `why` answerer: the plugin and the daemon's `/debug/why` pick from this list. */
import type { WhyAnswerer } from '../src/controller/why.ts';
import { csrWhy } from './certificates/why.ts';
import { budgetWhy, podWhy } from './disruption/why.ts';
import { statefulSetWhy } from './statefulset/why.ts';

export const whyAnswerers: WhyAnswerer[] = [budgetWhy, podWhy, csrWhy, statefulSetWhy];
