"""Helpers for the run tests (no tests here): a tiny one-call controller and a synthetic question set."""
from __future__ import annotations

from trajscope.engine.runs import RunInputs
from trajscope.format import FinalStep, Question, Trajectory, make_trajectory_id


class OneCallController:
    """Asks the model once and takes its text as the final answer; raises on 'boom' questions."""

    name = "one_call"

    async def run(self, question: Question, ctx) -> Trajectory:
        if "boom" in question.text:
            raise RuntimeError("controller bug")
        completion = await ctx.model.complete([{"role": "user", "content": question.text}])
        step = FinalStep(answer=completion.text, tokens_in=completion.tokens_in, tokens_out=completion.tokens_out,
                         latency_ms=completion.latency_ms, cost_usd=completion.cost_usd, raw=completion.text)
        return Trajectory(trajectory_id=make_trajectory_id(ctx.run.run_id, question.question_id), run=ctx.run,
                          question=question, steps=[step], final_answer=completion.text, end_reason="final")


def questions(n: int, *, boom: tuple[int, ...] = ()) -> list[Question]:
    return [Question(question_id=f"q{i:03d}", text=f"question {i}" + (" boom" if i in boom else ""),
                     gold_answer=f"answer {i}", aliases=[f"ans {i}"]) for i in range(n)]


def inputs(n: int, *, boom: tuple[int, ...] = ()) -> RunInputs:
    return RunInputs(dataset_name="synthetic", questions=questions(n, boom=boom), corpus={},
                     controller=OneCallController())


def answer_from_question(request) -> str:
    """Responder: the right answer for even questions, a wrong one for odd."""
    text = request.messages[-1]["content"]
    i = int(text.split()[1])
    return f"answer {i}" if i % 2 == 0 else "no idea"
