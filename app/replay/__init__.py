"""Drawing one trajectory step by step from the replay queries' results."""
from ._fork import fork_command, forks_sql, render_fork_command, render_forks
from ._render import load_trajectory, render_trajectory, replay_queries
from ._verdicts import pick_verdict

__all__ = ["fork_command", "forks_sql", "load_trajectory", "pick_verdict", "render_fork_command", "render_forks",
           "render_trajectory", "replay_queries"]
