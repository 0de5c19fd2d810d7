/**
 * Figures judged against a floor measured in the same run: paired rounds, alternating which side goes first,
 * printed as the medians of both sides and the median and range of the per-round ratios (never best-of).
 */

export interface Paired {
  name: string;
  unit: string;
  floorName: string;
  /** Per round: our value and the floor's, both in `unit`. */
  rounds: { ours: number; floor: number }[];
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 1 ? n.toFixed(2) : n.toPrecision(3);
}

/** `rounds` pairs of (ours, floor); odd rounds run the floor first, so that neither side always runs warmer. */
export async function pairedRounds(
  rounds: number,
  ours: () => Promise<number>,
  floor: () => Promise<number>,
): Promise<Paired['rounds']> {
  const out: Paired['rounds'] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) out.push({ ours: await ours(), floor: await floor() });
    else {
      const f = await floor();
      out.push({ ours: await ours(), floor: f });
    }
  }
  return out;
}

export function report(title: string, figures: Paired[]): void {
  console.log(`\n## ${title}`);
  for (const f of figures) {
    const ratios = f.rounds.map((r) => r.ours / r.floor);
    const ours = f.rounds.map((r) => r.ours);
    const range = (xs: number[]) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
    console.log(
      `${f.name.padEnd(44)} ${`${fmt(median(ours))} ${f.unit}`.padStart(14)} (range ${range(ours)})  ` +
        `${f.floorName} ${fmt(median(f.rounds.map((r) => r.floor)))} ${f.unit};` +
        `  ratio median ${fmt(median(ratios))}× (range ${range(ratios)}, ${ratios.length} rounds)`,
    );
  }
}
