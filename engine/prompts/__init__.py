"""Prompt texts of the controllers, stored as `<name>.txt` and loaded by name."""
from ._loader import PROMPT_DIR, available_prompts, load_prompt, render_prompt

__all__ = ["PROMPT_DIR", "available_prompts", "load_prompt", "render_prompt"]
