"""The controller registry: names, conditions and defaults, and `get_controller`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._arag import ARAGController
from ._base import ControllerBase
from ._baselines import DirectAnswerController, VanillaRAGController
from ._execution_rag import ExecutionRAGController
from ._read_gate import ReadGateController


@dataclass(frozen=True)
class ControllerSpec:
    """What `trajscope run --controller NAME --condition C` can ask for."""

    name: str
    description: str
    conditions: dict[str, dict[str, Any]]
    default_condition: str
    defaults: dict[str, Any]
    factory: type[ControllerBase]


def _spec(cls: type[ControllerBase]) -> ControllerSpec:
    return ControllerSpec(cls.name, cls.description, dict(cls.conditions), cls.default_condition,
                          dict(cls.defaults), cls)


CONTROLLERS: dict[str, ControllerSpec] = {
    s.name: s for s in map(_spec, (ReadGateController, ARAGController, ExecutionRAGController,
                                   DirectAnswerController, VanillaRAGController))
}


def list_controllers() -> list[ControllerSpec]:
    """Every registered controller, in registry order."""
    return list(CONTROLLERS.values())


def get_controller(name: str, condition: str | None = None, **params: Any) -> ControllerBase:
    """The controller `name` under `condition` (its default when None), with parameter overrides."""
    spec = CONTROLLERS.get(name)
    if spec is None:
        raise ValueError(f"unknown controller {name!r}; choose one of: {', '.join(CONTROLLERS)}")
    return spec.factory(condition, **params)
