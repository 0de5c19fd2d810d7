/** This build's version, and the API level it implements (what the daemon emulates and the embedded control plane serves). */
export const VERSION = '0.1.0';

export const API_LEVEL = { major: '1', minor: '34' } as const;

/** The API level as a semver, as LeaseCandidates carry it. */
export const API_LEVEL_SEMVER = `${API_LEVEL.major}.${API_LEVEL.minor}.0`;
