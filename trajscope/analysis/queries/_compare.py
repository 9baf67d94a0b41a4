"""compare_runs: the paired comparison of two runs (accuracy delta, bootstrap CI, McNemar, TOST, strata)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trajscope.analysis.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapCI,
    McNemarResult,
    TOSTResult,
    TransitionTable,
    UnpairedComparison,
    mcnemar_test,
    paired_bootstrap_delta,
    tost_paired,
    transition_table,
)

from ._outcomes import (
    DEFAULT_COMPARE_METRIC,
    STRATA,
    QueryError,
    paired_outcomes_sql,
    require_run,
    resolve_rubric_metric,
    run_question_count_sql,
    run_question_ids_sql,
)


@dataclass(frozen=True)
class PairedStatistics:
    """Paired statistics of one slice (all questions, or one stratum)."""

    stratum: str
    n: int
    accuracy_a: float
    accuracy_b: float
    delta: float
    bootstrap: BootstrapCI
    mcnemar: McNemarResult | None  # None for a non-binary metric (F1)
    transitions: TransitionTable | None
    tost: TOSTResult | None


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on the question ids both answered; `sql` is what fetched the outcomes."""

    run_a: str
    run_b: str
    metric: str
    pairing: str
    only_a: list[str]
    only_b: list[str]
    overall: PairedStatistics
    strata_column: str | None
    strata: list[PairedStatistics] = field(default_factory=list)
    sql: str = ""


def _statistics(stratum: str, ids: list[str], a: np.ndarray, b: np.ndarray, *, binary: bool,
                margin: float | None, n_resamples: int, seed: int) -> PairedStatistics:
    transitions = transition_table(ids, a, b) if binary else None
    mcnemar = (
        mcnemar_test(len(transitions.a_only), len(transitions.b_only)) if transitions is not None else None
    )
    tost = tost_paired(a, b, margin) if margin is not None and a.size >= 2 else None
    return PairedStatistics(
        stratum=stratum,
        n=int(a.size),
        accuracy_a=float(a.mean()),
        accuracy_b=float(b.mean()),
        delta=float((b - a).mean()),
        bootstrap=paired_bootstrap_delta(a, b, n_resamples=n_resamples, seed=seed),
        mcnemar=mcnemar,
        transitions=transitions,
        tost=tost,
    )


def _arrow(con: Any, sql: str, params: dict[str, Any]) -> pa.Table:
    """A query's result as Arrow, on a Reader or on a raw connection."""
    with warnings.catch_warnings():
        # A raw connection's DB-API result notes its extra copy of the rows (DuckDB 2); con.sql would avoid it,
        # but DuckDB 2 refuses a relation while an earlier execute's result is unfinished on the connection.
        warnings.simplefilter("ignore", UserWarning)
        return con.execute(sql, params).to_arrow_table()


def _unpaired(con: Any, run: str, paired: set[str]) -> list[str]:
    """The run's question ids outside `paired` (a subset of them), sorted; fetched only when the counts differ, as
    most comparisons pair every question."""
    if con.execute(run_question_count_sql(), {"run": run}).fetchone()[0] == len(paired):
        return []
    ids = _arrow(con, run_question_ids_sql(), {"run": run}).column(0).to_pylist()
    return sorted(set(ids) - paired)


def compare_runs(
    con: Any,
    run_a: str,
    run_b: str,
    *,
    metric: str = DEFAULT_COMPARE_METRIC,
    strata: str | None = None,
    margin: float | None = None,
    subset: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Paired comparison of B against A under metric; subset "a_zero_read" keeps questions A read nothing for.

    Questions only one run answered are excluded and listed (the pairing note says so); runs with no
    shared question id raise UnpairedComparison. Questions lacking a score under metric are excluded too.
    """
    if strata is not None and strata not in STRATA:
        raise QueryError(f"unknown strata column {strata!r}; choose one of {', '.join(STRATA)}")
    if subset not in (None, "a_zero_read"):
        raise QueryError(f"unknown subset {subset!r}; the only subset is 'a_zero_read'")
    require_run(con, run_a)
    require_run(con, run_b)
    if metric.startswith("rubric:"):
        metric = resolve_rubric_metric(con, metric, (run_a, run_b))
    sql = paired_outcomes_sql(metric)
    if subset == "a_zero_read":
        sql = f"SELECT * FROM ({sql}) WHERE a_zero_read"
    # Column by column: a run of 250,000 questions as Python rows cost more than the query itself.
    rows = _arrow(con, sql, {"run_a": run_a, "run_b": run_b})
    scored = rows.filter(pc.and_(pc.is_valid(rows["outcome_a"]), pc.is_valid(rows["outcome_b"])))
    if not scored.num_rows:
        what = "no shared question ids" if not rows.num_rows else f"no shared question scored under {metric!r}"
        raise UnpairedComparison(f"runs {run_a!r} and {run_b!r}: {what}; a paired comparison is impossible")
    ids = scored["question_id"].to_pylist()
    # Cast in Arrow: a metric whose outcome SQL types as DECIMAL became Python Decimals row by row (0.2-0.4 s at 250k).
    a = scored["outcome_a"].cast(pa.float64()).to_numpy()
    b = scored["outcome_b"].cast(pa.float64()).to_numpy()
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    paired_ids = set(ids)
    # A question both runs answered but one left unscored (unjudged) is shared, not "only in" either run.
    shared_ids = paired_ids if subset else set(rows["question_id"].to_pylist())
    unscored = len(shared_ids - paired_ids)
    only_a, only_b = _unpaired(con, run_a, shared_ids), _unpaired(con, run_b, shared_ids)
    if subset == "a_zero_read":
        note = (f"paired on the {len(ids)} questions run A finalised voluntarily without reading "
                "(zero-read rescue subset)")
    elif not only_a and not only_b and not unscored:
        note = f"paired on all {len(ids)} question ids"
    else:
        excluded = []
        if unscored:
            hint = " (`trajscope judge` on both runs scores them)" if metric == DEFAULT_COMPARE_METRIC else ""
            excluded.append(f"{unscored} shared question(s) lacking a score under {metric!r} in a run{hint}")
        if only_a or only_b:
            excluded.append(f"{len(only_a)} only in A and {len(only_b)} only in B")
        note = f"paired on the {len(ids)} shared question ids; {' and '.join(excluded)} are excluded"
    options: dict[str, Any] = dict(binary=binary, margin=margin, n_resamples=n_resamples, seed=seed)
    overall = _statistics("all", ids, a, b, **options)
    sliced: list[PairedStatistics] = []
    if strata is not None:
        keys = np.array(["(none)" if v is None else str(v) for v in scored[strata].to_pylist()], dtype=object)
        for key in sorted(set(keys.tolist()), key=lambda k: (len(k), k)):
            mask = keys == key
            key_ids = [i for i, m in zip(ids, mask, strict=False) if m]
            sliced.append(_statistics(key, key_ids, a[mask], b[mask], **options))
    return Comparison(run_a, run_b, metric, note, only_a, only_b, overall, strata, sliced, sql)


def zero_read_rescue(
    con: Any, run_a: str, run_b: str, *, metric: str = DEFAULT_COMPARE_METRIC, **options: Any
) -> Comparison:
    """Read-Gate's rescue analysis: B against A on the questions where A finalised with no read.

    A self-selected subset: its delta is the rescue capacity, not a population effect.
    """
    return compare_runs(con, run_a, run_b, metric=metric, subset="a_zero_read", **options)


__all__ = ["Comparison", "PairedStatistics", "compare_runs", "zero_read_rescue"]
