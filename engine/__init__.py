"""Running experiments: retrieval, tool environment, model client, controllers, judges, runs, audit.

Subpackages carry the public APIs (`engine.retrieval`, `engine.environment`, `engine.llm`,
`engine.controllers`, `engine.judges`, `engine.entities`, `engine.judge_pass`, `engine.runs`,
`engine.audit`); this package imports none of them, so `import engine.judges` never pulls in torch or llama.cpp.
"""
