"""Agent controllers: the Read-Gate family, ExecutionRAG and its A-RAG baseline, simple baselines."""
from ._actions import ActionSpace, JsonActionProtocol, ToolCallProtocol, make_protocol
from ._arag import ARAGController
from ._base import ControllerBase
from ._baselines import DirectAnswerController, VanillaRAGController
from ._context import EpisodeContext
from ._execution_rag import ExecutionRAGController
from ._gates import GATE_SETS, EvidenceState, GateDecision, low_evidence_gate, read_gate, snippet_only_gate
from ._read_gate import ReadGateController
from ._register import Proposal, Register, RegisterItem, apply_update, compose_query, select_active
from ._register_agent import RegisterAgentLoop
from ._registry import CONTROLLERS, ControllerSpec, get_controller, list_controllers

__all__ = [
    "CONTROLLERS", "GATE_SETS", "ARAGController", "ActionSpace", "ControllerBase", "ControllerSpec",
    "DirectAnswerController", "EpisodeContext", "EvidenceState", "ExecutionRAGController", "GateDecision",
    "JsonActionProtocol", "Proposal", "ReadGateController", "Register", "RegisterAgentLoop", "RegisterItem",
    "ToolCallProtocol",
    "VanillaRAGController", "apply_update", "compose_query", "get_controller", "list_controllers",
    "low_evidence_gate", "make_protocol", "read_gate", "select_active",
    "snippet_only_gate",
]
