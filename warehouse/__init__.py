"""trajscope."""
