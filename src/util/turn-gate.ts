/** Tells whether a caller is the first since the event loop last ran its `setImmediate` callbacks (or ever). */
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
