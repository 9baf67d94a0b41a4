"""Drawing one trajectory step by step from the replay queries' results."""
from ._render import load_trajectory, render_trajectory, replay_queries

__all__ = ["load_trajectory", "render_trajectory", "replay_queries"]
