"""The LLM equivalence judge's parsing and short-cuts, with a scripted in-process model."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from trajscope.engine.judges import EquivalenceItem, LLMJudge
from trajscope.engine.llm import Completion, parse_json_object


@dataclass
class ScriptedModel:
    """Returns the scripted texts in order and records the prompts it was sent."""

    texts: list[str]
    prompts: list[str] = field(default_factory=list)

    @dataclass
    class config:  # noqa: N801 - mimics ChatModel.config.name
        name = "scripted"

    async def complete(self, messages, *, response_schema=None, **_):
        self.prompts.append(messages[-1]["content"])
        text = self.texts.pop(0)
        parsed, error = parse_json_object(text)
        return Completion(text=text, parsed=parsed, parse_error=error)

    async def close(self) -> None:
        pass


ITEM = EquivalenceItem("Where was Scott Derrickson born?", "Denver", ["Denver, Colorado"], "the Mile High City")


def _judge(*texts: str) -> tuple[LLMJudge, ScriptedModel]:
    model = ScriptedModel(list(texts))
    return LLMJudge(model), model


def test_json_verdicts_and_prompt_contents():
    judge, model = _judge('{"equivalent": true, "rationale": "same city"}', '{"equivalent": false, "rationale": "x"}')
    verdicts = asyncio.run(judge.judge_many([ITEM, ITEM]))
    assert [(v.equivalent, v.rationale) for v in verdicts] == [(True, "same city"), (False, "x")]
    assert "Gold answer: Denver" in model.prompts[0]
    assert "Accepted aliases: Denver, Colorado" in model.prompts[0]
    assert "Predicted answer: the Mile High City" in model.prompts[0]
    assert judge.model_name == "scripted"


def test_prose_yes_no_is_accepted_and_garbage_is_an_error():
    judge, _ = _judge("Yes. Both name Denver.", "maybe?")
    yes, garbage = asyncio.run(judge.judge_many([ITEM, ITEM]))
    assert yes.equivalent is True and yes.error is None
    assert garbage.equivalent is None and "unparseable" in garbage.error


def test_empty_prediction_and_missing_gold_need_no_model_call():
    judge, model = _judge()
    empty = asyncio.run(judge.judge(EquivalenceItem("q", "Denver", [], "  ")))
    no_gold = asyncio.run(judge.judge(EquivalenceItem("q", None, [], "Denver")))
    assert empty.equivalent is False
    assert no_gold.equivalent is None and "no gold" in no_gold.error
    assert model.prompts == []
