"""The run's progress bar: done / total with ETA, cost so far and error count."""
from __future__ import annotations

from tqdm.auto import tqdm


class RunProgress:
    """A tqdm bar (or nothing when disabled) updated once per finished trajectory."""

    def __init__(self, total: int, *, initial: int, desc: str, enabled: bool):
        self.cost_usd = 0.0
        self.errors = 0
        self._bar = tqdm(total=total, initial=initial, desc=desc[:40], unit="q", disable=not enabled,
                         dynamic_ncols=True, smoothing=0.1)

    def advance(self, cost_usd: float, failed: bool) -> None:
        """One more trajectory is logged."""
        self.cost_usd += cost_usd
        self.errors += int(failed)
        self._bar.set_postfix_str(f"cost=${self.cost_usd:.4f} errors={self.errors}", refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        """Finish the bar."""
        self._bar.close()
