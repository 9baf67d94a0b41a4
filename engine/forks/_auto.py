"""`--intervention auto`: the intervention a trajectory's first decisive error implies (and its placebo).

never_queried -> replace the query of the last search before the decisive step with the lost gold passage's
title; never_retrieved / ranked_out -> inject the gold passage as the rank-1 candidate of the decisive
search; not_read -> force the read of the gold passage at the agent's next action after the search that
showed it; read, then wrong (gave_up, other_passage_entity, reasoning) and run_error -> none applies.
The placebo does the same with the non-gold passage nearest the gold one in length."""
from __future__ import annotations

from collections.abc import Mapping

from trajscope.format import Chunk, SearchStep, Trajectory

from ._interventions import ForkError, Intervention, placebo_chunk

AUTO = ("auto", "auto_placebo")
NONE_APPLIES = {
    "gave_up": "the gold evidence was read and the agent gave up: no evidence intervention applies",
    "other_passage_entity": "the gold evidence was read, then another passage's entity answered: none applies",
    "reasoning": "the gold evidence was read, then the answer was wrong: no evidence intervention applies",
    "run_error": "the run failed with an error: no evidence intervention applies",
}


def _reply_start_after(parent: Trajectory, index: int) -> int | None:
    for j in range(index + 1, len(parent.steps)):
        step = parent.steps[j]
        if step.raw is not None or step.cached is not None:
            return j
    return None


def auto_plan(parent: Trajectory, facts: Mapping[str, object], corpus: Mapping[str, Chunk], *,
              placebo: bool) -> tuple[int, Intervention, str]:
    """(step, intervention, decisive rule) for one wrong parent; ForkError says why none applies."""
    rule, step, chunk = facts.get("decisive_rule"), facts.get("rule_step"), facts.get("decisive_chunk_id")
    if rule is None or step is None:
        raise ForkError("no first decisive error for this trajectory (right, unjudged, or the log lacks what the "
                        "rule needs: see first_decisive_error.reason)")
    rule, step = str(rule), int(step)  # type: ignore[call-overload]
    if rule in NONE_APPLIES:
        raise ForkError(f"{rule}: {NONE_APPLIES[rule]}")
    if not chunk or str(chunk) not in corpus:
        raise ForkError(f"{rule}: the lost gold passage {chunk!r} is not in the loaded corpus")
    gold = str(chunk)
    target = placebo_chunk(gold, set(parent.question.gold_chunk_ids), corpus) if placebo else gold
    if rule == "never_queried":
        searches = [i for i, s in enumerate(parent.steps[:step + 1]) if isinstance(s, SearchStep)]
        if not searches:
            raise ForkError("never_queried: no search before the decisive step to replace")
        text = corpus[target].title or corpus[target].text[:80]
        return searches[-1], Intervention("replace_query", text), rule
    if rule in ("never_retrieved", "ranked_out"):
        if not isinstance(parent.steps[step], SearchStep):
            raise ForkError(f"{rule}: the decisive step {step} is not a search")
        return step, Intervention("inject_candidate", target), rule
    if rule == "not_read":
        after = _reply_start_after(parent, step)
        if after is None:
            raise ForkError("not_read: the agent took no action after the search that showed the gold passage")
        # placebo resolves to the non-gold passage of the gold one's length itself
        return after, Intervention("placebo", gold) if placebo else Intervention("force_read", gold), rule
    raise ForkError(f"no intervention is defined for the rule {rule!r}")
