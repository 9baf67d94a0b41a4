"""The judge pass's reads and writes: a run's judge inputs (a named query) and its results stored in one
transaction; the scoring itself is engine.judge_pass."""
from ._inputs import INPUTS_SQL, JudgeInput, RunInputs, load_judge_inputs
from ._store import StoredJudging, store_judge_results

__all__ = ["INPUTS_SQL", "JudgeInput", "RunInputs", "StoredJudging", "load_judge_inputs", "store_judge_results"]
