"""The accuracy-versus-tokens Pareto frontier across runs."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt


def pareto_frontier(tokens: npt.ArrayLike, accuracy: npt.ArrayLike) -> np.ndarray:
    """Boolean mask of points no other point dominates (fewer or equal tokens and higher or equal
    accuracy, strictly better in one)."""
    tokens = np.asarray(tokens, dtype=float)
    accuracy = np.asarray(accuracy, dtype=float)
    if tokens.shape != accuracy.shape:
        raise ValueError("tokens and accuracy must have the same length")
    no_worse = (tokens[None, :] <= tokens[:, None]) & (accuracy[None, :] >= accuracy[:, None])
    better = (tokens[None, :] < tokens[:, None]) | (accuracy[None, :] > accuracy[:, None])
    dominated = (no_worse & better).any(axis=1)
    return np.asarray(~dominated)


__all__ = ["pareto_frontier"]
