"""The trajscope extension carried inside exported peer formats: the canonical trajectory, its verdicts and labels.

An export to OpenInference, OTel GenAI, ATIF or Inspect renders each trajectory in the peer's own
conventions and also attaches one `Exported` record (JSON text) under `EXPORT_KEY`, so that importing
the file back restores every canonical field, however much of it the peer's conventions can express.
"""
from __future__ import annotations

from typing import Final, Literal

import msgspec

from ._codec import decode_strict
from ._records import Record
from ._trajectory import Trajectory

EXPORT_VERSION: Final = "1"
# The attribute / metadata key the record sits under in every exported format.
EXPORT_KEY = "trajscope.export"

LabelValue = str | bool | float | None


class Exported(Record, kw_only=True):
    """One exported trajectory: the canonical record (judgments = every verdict the warehouse holds) and its labels."""

    export_version: Literal["1"] = EXPORT_VERSION
    trajectory: Trajectory
    # Named labels the warehouse's views gave the trajectory (`correct`, `read_gate.label.regex`, ...);
    # informative for a peer, recomputed by the views after a re-import.
    labels: dict[str, LabelValue] = {}


_decoder = msgspec.json.Decoder(Exported)
_encoder = msgspec.json.Encoder()


def encode_exported(record: Exported) -> str:
    """The record as compact JSON text (an attribute value)."""
    return _encoder.encode(record).decode("utf-8")


def decode_exported(data: str | bytes, *, path: str, line: int) -> Exported:
    """Decode an attached record strictly; a schema error is a RecordError naming the field."""
    return decode_strict(_decoder, data, path=path, line=line)
