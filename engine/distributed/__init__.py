"""Runs across machines on Ray: a matrix split into (run, shard) tasks, each the local orchestrator on a worker.

Ray is imported only by run_matrix_on_ray, so importing this package costs nothing extra.
"""
from ._driver import RayMatrixResult, ShardFailure, run_matrix_on_ray
from ._plan import Plan, PlanError, plan_matrix
from ._storage import SharedStorage
from ._task import CodeMismatch, ShardBusy, ShardResult, ShardTask, run_shard

__all__ = [
    "CodeMismatch", "Plan", "PlanError", "RayMatrixResult", "SharedStorage", "ShardBusy", "ShardFailure",
    "ShardResult", "ShardTask", "plan_matrix", "run_matrix_on_ray", "run_shard",
]
