"""Importers for trajectory logs: each turns one file into canonical `Trajectory` records.

`import_file` streams one file's records; `convert_file` is the whole import the CLI and the Upload page
share (records, duplicates dropped and reported, a capability profile per run, the import report).
Bad input raises `trajscope.format.RecordError` naming file, line and field.
"""
from trajscope.format import RecordError

from ._actions import CANONICAL_ACTIONS, DEFAULT_TOOL_MAP, REACT_TOOL_MAP
from ._arag import ARAG_MAPPING, import_arag
from ._capabilities import NO_READ, RunTally, declare, infer_capabilities, parse_declarations, profile_line
from ._context import ImportNotes
from ._convert import ImportOptions, convert_file
from ._dataset_key import DATASET_HELP
from ._detect import detect_format
from ._episodes import TextPatterns, load_patterns
from ._inspect import SCORER_JUDGES
from ._labels import TRAIL_CATEGORIES, normalise_trail_category, read_label_file
from ._mapping import Mapping, load_mapping, load_tool_map
from ._predictions import read_prediction_file
from ._questions import QuestionBook, text_question_id
from ._registry import FORMATS, Importer, import_file, open_import, resolve_format
from ._report import FileReport, RunReport
from ._yaml_nesting import load_yaml

__all__ = [
    "ARAG_MAPPING", "CANONICAL_ACTIONS", "DATASET_HELP", "DEFAULT_TOOL_MAP", "FORMATS", "NO_READ", "REACT_TOOL_MAP",
    "SCORER_JUDGES", "TRAIL_CATEGORIES", "FileReport", "ImportNotes", "ImportOptions", "Importer", "Mapping",
    "QuestionBook",
    "RecordError", "RunReport", "RunTally", "TextPatterns", "convert_file", "declare", "detect_format",
    "import_arag", "import_file", "infer_capabilities", "load_mapping", "load_patterns", "load_tool_map", "load_yaml",
    "normalise_trail_category", "open_import", "read_label_file", "read_prediction_file", "parse_declarations",
    "profile_line",
    "resolve_format", "text_question_id",
]
