"""What every controller shares: condition/parameter handling, the episode wrapper, model calls."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from trajscope.engine.llm import ModelError
from trajscope.format import Question, Trajectory

from ._actions import ActionProtocol, make_protocol
from ._context import EpisodeContext
from ._recorder import TrajectoryRecorder

if TYPE_CHECKING:  # for annotations only: the environment pulls in the retrieval stack
    from trajscope.engine.environment import ToolEnvironment

EpisodeResult = tuple[str | None, str, str | None]  # final answer, end_reason, error


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(error_type, message) for an exception escaping an episode."""
    if isinstance(exc, ModelError):
        return f"model_error:{exc.kind}", str(exc)
    return "controller_error", f"{type(exc).__name__}: {exc}"


class ControllerBase:
    """A named controller with named conditions; `run` never raises for a failed episode."""

    name: ClassVar[str]
    description: ClassVar[str]
    conditions: ClassVar[dict[str, dict[str, Any]]]
    default_condition: ClassVar[str]
    defaults: ClassVar[dict[str, Any]]
    # Whether the agent has a read action. Pipelines that place passages in the prompt themselves
    # have no evidence-inspection protocol to break, so the Read-Gate discipline branch skips them.
    read_action: ClassVar[bool] = True
    # Whether it searches the corpus (candidates with chunk ids and snippets); the run's capability profile says so.
    searches: ClassVar[bool] = True

    def __init__(self, condition: str | None = None, **params: Any):
        condition = condition or self.default_condition
        if condition not in self.conditions:
            raise ValueError(
                f"controller {self.name!r} has no condition {condition!r}; "
                f"choose one of: {', '.join(self.conditions)}"
            )
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"controller {self.name!r} has no parameter(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(self.defaults))}"
            )
        for name, value in params.items():
            default = self.defaults[name]
            # A list or mapping where the default is a plain value (or the reverse) would fail deep in the
            # controller (an unhashable list in a set lookup): refused here, naming the parameter.
            if default is not None and value is not None and \
                    isinstance(value, (list, dict)) != isinstance(default, (list, tuple, dict)):
                raise ValueError(f"controller {self.name!r}: parameter {name} must be like {default!r}, "
                                 f"not a {type(value).__name__} ({value!r})")
        self.condition = condition
        self.params: dict[str, Any] = {**self.defaults, **self.conditions[condition], **params}
        self.check_params(self.params)

    def check_params(self, params: dict[str, Any]) -> None:
        """Reject parameter values this controller cannot run with (ValueError)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(condition={self.condition!r})"

    def effective_params(self, ctx: EpisodeContext) -> dict[str, Any]:
        """This controller's parameters, overridden by the known keys of `ctx.params`."""
        overrides: Mapping[str, Any] = getattr(ctx, "params", None) or {}
        return {**self.params, **{k: v for k, v in overrides.items() if k in self.defaults}}

    async def run(self, question: Question, ctx: EpisodeContext) -> Trajectory:
        """Run one episode; any failure becomes an error trajectory holding the steps so far."""
        recorder = TrajectoryRecorder(ctx.run, question)
        watch = getattr(ctx, "watch_recorder", None)  # a fork follows the episode step by step (engine.forks)
        if watch is not None:
            watch(recorder)
        recorder.metadata["controller"] = self.name
        recorder.metadata["condition"] = self.condition
        try:
            params = self.effective_params(ctx)
            self.check_params(params)
            answer, end_reason, error = await self.episode(question, ctx, recorder, params)
        except Exception as exc:  # a run must never crash on one question
            kind, message = describe_error(exc)
            recorder.add_error(kind, message)
            return recorder.finish(final_answer=None, end_reason="error", error=message)
        return recorder.finish(final_answer=answer, end_reason=end_reason, error=error)

    async def episode(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder,
                      params: dict[str, Any]) -> EpisodeResult:
        """The controller's own logic; records steps on `recorder`."""
        raise NotImplementedError


def resolve_protocol(ctx: EpisodeContext, params: Mapping[str, Any], *, text_is_final: bool = False) -> ActionProtocol:
    """The action protocol: the `protocol` parameter, else the run's model settings, else the model's."""
    name = params.get("protocol")
    if not name:
        settings = getattr(getattr(ctx, "run", None), "model_settings", None)
        name = getattr(settings, "protocol", None)
    if not name:
        name = getattr(getattr(ctx.model, "config", None), "protocol", None)
    return make_protocol(name or "tools", text_is_final=text_is_final)


def decoding_overrides(params: Mapping[str, Any], key: str = "temperature") -> dict[str, Any]:
    """Decoding overrides for ChatModel.complete; only the ones the condition fixes."""
    value = params.get(key)
    return {} if value is None else {"temperature": value}


def output_limit(ctx: EpisodeContext, params: Mapping[str, Any]) -> dict[str, Any]:
    """max_tokens for each call: the controller's `max_output_tokens` unless the run's model config fixes
    one (the embedded model does: its window is 4,096 tokens)."""
    cap = params.get("max_output_tokens")
    configured = getattr(getattr(ctx.model, "config", None), "max_tokens", None)
    return {} if cap is None or configured is not None else {"max_tokens": int(cap)}


# The embedded model serves a 4,096-token window; leave room for the schema and the reply.
LOCAL_HISTORY_TOKENS = 2500


def history_limit(ctx: EpisodeContext, params: Mapping[str, Any]) -> int | None:
    """The `max_history_tokens` parameter, else a safe default for the embedded model, else no limit."""
    if params.get("max_history_tokens") is not None:
        return int(params["max_history_tokens"])
    return LOCAL_HISTORY_TOKENS if getattr(getattr(ctx.model, "config", None), "local", False) else None


def open_environment(ctx: EpisodeContext, **options: Any) -> ToolEnvironment:
    """A fresh ToolEnvironment for this episode, configured for the controller's tool set."""
    return ctx.make_environment(**options)
