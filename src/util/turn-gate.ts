/** Tells whether a caller is the first in this turn of the event loop (the gate opens again in the next one). */
export class TurnGate {
  private taken = false;

  first(): boolean {
    if (this.taken) return false;
    this.taken = true;
    setImmediate(() => {
      this.taken = false;
    });
    return true;
  }
}
