"""trajscope: the canonical trajectory format (`trajscope.format`) and the `trajscope` command."""
