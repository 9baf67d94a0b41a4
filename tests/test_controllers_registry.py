"""The controller registry and the pure parts: entity coverage, gates, register invariants, history."""
from __future__ import annotations

import pytest

from trajscope.engine.controllers import (
    CONTROLLERS,
    EvidenceState,
    Proposal,
    Register,
    apply_update,
    get_controller,
    list_controllers,
    low_evidence_gate,
    read_gate,
    select_active,
    snippet_only_gate,
)
from trajscope.engine.controllers._history import ELIDED, fit_history
from trajscope.engine.entities import extract_regex_entities as extract_entities
from trajscope.engine.prompts import available_prompts, render_prompt


def test_registry_lists_every_controller_with_its_conditions():
    table = {s.name: list(s.conditions) for s in list_controllers()}
    assert table == {
        "read_gate": ["baseline", "read_gate", "context_injection", "strict_prompt", "lowev", "full"],
        "arag": ["baseline"],
        "execution_rag": ["register", "composed", "question_only_init", "no_updates", "composed_question_only_init",
                          "composed_no_updates"],
        "direct": ["baseline"],
        "vanilla_rag": ["k3", "k5", "k10"],
    }
    assert CONTROLLERS["read_gate"].defaults["max_turns"] == 10
    assert CONTROLLERS["execution_rag"].defaults["max_loops"] == 15


def test_get_controller_merges_defaults_condition_and_overrides():
    controller = get_controller("read_gate", "lowev", correction_cap=5)
    assert controller.name == "read_gate" and controller.condition == "lowev"
    assert controller.params["gate"] == "lowev" and controller.params["correction_cap"] == 5
    assert controller.params["max_turns"] == 10
    assert get_controller("execution_rag").condition == "register"
    assert get_controller("execution_rag").params["variant"] == "agent"
    assert get_controller("execution_rag", "composed").params["variant"] == "composed"
    assert get_controller("execution_rag", "no_updates").params["iterative_updates"] is False

    class Ctx:
        params = {"max_turns": 4, "unrelated": 1}

    assert controller.effective_params(Ctx())["max_turns"] == 4


@pytest.mark.parametrize(("args", "message"), [
    (("nope",), "unknown controller 'nope'; choose one of: read_gate, arag"),
    (("read_gate", "gated"), "controller 'read_gate' has no condition 'gated'; choose one of: baseline"),
    (("arag", None), None),
])
def test_get_controller_rejects_unknown_names_with_the_choices(args, message):
    if message is None:
        assert get_controller(*args).name == "arag"
        return
    with pytest.raises(ValueError) as err:
        get_controller(*args)
    assert str(err.value).startswith(message)


def test_get_controller_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="has no parameter\\(s\\) turns"):
        get_controller("read_gate", turns=3)


def test_every_prompt_renders_within_a_small_context():
    assert "force_final_answer" in available_prompts()
    assert len(render_prompt("read_gate_system", tools="- search(query)", max_turns=10)) < 1200
    with pytest.raises(KeyError):
        render_prompt("gate_lowev", coverage=50)  # a missing field is an error, not a blank


def test_regex_entities_and_coverage_drive_the_low_evidence_gate():
    question = "Are both Kurram Garhi and Trojkrsti located in the same country?"
    assert extract_entities(question) == ["Kurram Garhi", "Trojkrsti"]
    state = EvidenceState(question, search_count=1, read_count=1,
                          read_texts=["Kurram Garhi is a village in Pakistan."])
    decision = low_evidence_gate("no", state)
    assert decision is not None and decision.gate == "lowev" and "missing: Trojkrsti" in decision.observation
    covered = EvidenceState(question, 1, 1, ["Kurram Garhi is in Pakistan.", "Trojkrsti is in Macedonia."])
    assert low_evidence_gate("no", covered) is None


def test_read_gate_predicate_is_exactly_search_without_read():
    assert read_gate("x", EvidenceState("q", search_count=1, read_count=0)) is not None
    assert read_gate("x", EvidenceState("q", search_count=0, read_count=0)) is None
    assert read_gate("x", EvidenceState("q", search_count=3, read_count=1)) is None


def test_snippet_only_gate_matches_whole_words():
    state = EvidenceState("q", 1, 1, read_texts=["He was born in Paris."], snippet_texts=["Parisian art; Lyon"])
    assert snippet_only_gate("Paris", state) is None  # found in a read passage
    assert snippet_only_gate("Lyon", state) is not None
    assert snippet_only_gate("Pari", state) is None  # not a whole-word match anywhere


def test_apply_update_never_loses_an_item_or_evidence():
    register = Register.initial(["a?", "b?"])
    register.items["R1"].supporting_chunk_ids = ["c1"]
    outcome = apply_update(register, [
        Proposal("R1", status="removed", supporting_chunk_ids=["c2"]),
        Proposal("R2", status="retired", reason="  "),
    ], ["c?"], known_chunk_ids={"c1", "c2"})
    new = outcome.register
    assert list(new.items) == ["R1", "R2", "R3"]
    assert new.items["R1"].status == "active" and new.items["R1"].supporting_chunk_ids == ["c1", "c2"]
    assert new.items["R2"].status == "pending"
    assert new.items["R3"].status == "pending" and new.items["R3"].sub_question == "c?"
    assert register.items["R1"].supporting_chunk_ids == ["c1"]  # the previous state is not mutated
    assert len(outcome.violations) == 3


def test_select_active_rotates_away_from_a_stalled_item():
    register = Register.initial(["a?", "b?"])
    item, changes = select_active(register)
    assert item.item_id == "R1" and changes == []
    item, changes = select_active(register, {"R1"})
    assert item.item_id == "R2"
    assert [(c.item_id, c.from_status, c.to_status) for c in changes] == [("R1", "active", "pending"),
                                                                         ("R2", "pending", "active")]
    item, changes = select_active(register, {"R1", "R2"})
    assert item.item_id == "R2" and changes == []  # everything stalled: stay on the active item


def test_fit_history_elides_oldest_observations_first():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    for i in range(5):
        messages += [{"role": "assistant", "content": f"a{i}"}, {"role": "user", "content": "x" * 400}]
    fitted = fit_history(messages, 300)
    contents = [m["content"] for m in fitted]
    assert contents[:2] == ["s", "q"] and contents[-1] == "x" * 400
    assert contents[3] == ELIDED and messages[3]["content"] == "x" * 400
    assert fit_history(messages, None) is messages


def test_the_embedded_model_gets_a_history_limit_by_default():
    from types import SimpleNamespace

    from trajscope.engine.controllers._base import LOCAL_HISTORY_TOKENS, history_limit

    local = SimpleNamespace(model=SimpleNamespace(config=SimpleNamespace(local=True)))
    remote = SimpleNamespace(model=SimpleNamespace(config=SimpleNamespace(local=False)))
    assert history_limit(local, {"max_history_tokens": None}) == LOCAL_HISTORY_TOKENS
    assert history_limit(remote, {"max_history_tokens": None}) is None
    assert history_limit(local, {"max_history_tokens": 900}) == 900


@pytest.mark.parametrize(("name", "params", "message"), [
    ("read_gate", {"gate": "soft"}, "unknown gate 'soft'"),
    ("read_gate", {"max_turns": 0}, "max_turns must be at least 1"),
    ("execution_rag", {"loop_search": "search"}, "loop_search must be semantic_search or keyword_search"),
    ("execution_rag", {"fallback_search": "read_chunk"}, "fallback_search: either, or None"),
])
def test_parameter_values_are_checked_when_the_controller_is_made(name, params, message):
    with pytest.raises(ValueError, match=message):
        get_controller(name, **params)


def test_no_prompt_offers_a_placeholder_value_a_small_model_could_copy():
    # SmolLM2 answered "<short answer>" when a prompt showed that placeholder inside a JSON example.
    import re

    from trajscope.engine.prompts import load_prompt

    for name in available_prompts():
        assert not re.search(r'"(?:<[^>"]*>|\.\.\.)"', load_prompt(name)), name


def test_register_sub_questions_are_capped_for_the_embedded_model():
    # tests/test_llm_ik.py compiles every structured schema into a grammar llama.cpp's parser accepts.
    from trajscope.engine.controllers._register_episode import init_schema

    assert init_schema(5)["properties"]["items"]["items"]["properties"]["sub_question"]["maxLength"] == 150


def test_update_ids_are_normalised_and_enumerated():
    from trajscope.engine.controllers._register import parse_update
    from trajscope.engine.controllers._register_episode import update_schema

    proposals, _, _ = parse_update({"updates": [{"id": "2", "status": "active"}, {"id": "r3"}, {"id": "X"}]})
    assert [p.item_id for p in proposals] == ["R2", "R3", "X"]
    item = update_schema(["R1", "R2"], ["c1"])["properties"]["updates"]["items"]["properties"]
    assert item["id"]["enum"] == ["R1", "R2"] and item["supporting_chunk_ids"]["items"]["enum"] == ["c1"]


def test_a_model_error_is_recognised_by_its_type_not_its_class_name():
    from trajscope.engine.controllers._base import describe_error
    from trajscope.engine.llm import ModelError

    class ModelError2(ModelError):
        pass

    assert describe_error(ModelError("timeout", "no reply", attempts=3))[0] == "model_error:timeout"
    assert describe_error(ModelError2("rate_limit", "slow down"))[0] == "model_error:rate_limit"
    lookalike = type("ModelError", (RuntimeError,), {})  # same name, unrelated class
    assert describe_error(lookalike("boom")) == ("controller_error", "ModelError: boom")
