"""The compile-free embedded runtime: schema grammars, the real model under them, and its HTTP server."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import jsonschema
import pytest

from trajscope.engine.controllers import ActionSpace
from trajscope.engine.controllers._actions import ANSWER_SCHEMA
from trajscope.engine.controllers._register_episode import init_schema, update_schema
from trajscope.engine.environment import tool_schemas
from trajscope.engine.llm import LOCAL_MODEL_NAME, LocalModelServer, find_local_gguf
from trajscope.engine.llm._chat_prompt import ChatPrompter
from trajscope.engine.llm._gbnf import literal, schema_to_gbnf
from trajscope.engine.llm._ik_runtime import IkRuntime

MESSAGES = [{"role": "system", "content": "Reply with one JSON object."},
            {"role": "user", "content": "Question: In which city was Ada Lovelace born?"}]


@pytest.fixture(scope="module")
def runtime():
    rt = IkRuntime(find_local_gguf(), n_ctx=2048, n_threads=1)
    yield rt
    rt.close()


def _schemas() -> list[dict]:
    space = ActionSpace(tool_schemas("read_gate", "tools"))
    # update_schema's arrays are unbounded, and this model repeats an item until max_tokens (with either
    # runtime); a maxItems copy shows the bound ends the reply.
    update = update_schema(["R1", "R2"], ["demo:1", "c2"])
    update["properties"]["updates"]["maxItems"] = 2
    update["properties"]["updates"]["items"]["properties"]["supporting_chunk_ids"]["maxItems"] = 2
    return [space.json_schema(["demo:1", "demo:2"]), ANSWER_SCHEMA, init_schema(3), update,
            {"type": "object", "properties": {"why": {"type": "string", "maxLength": 5}}, "required": ["why"]}]


def test_literals_escape_quotes_backslashes_and_control_characters():
    assert literal('a"b\\c\n') == r'"\"a\\\"b\\\\c\\n\""'
    assert literal("Zürich") == r'"\"Zürich\""'


def test_grammars_list_required_properties_first_and_only_listed_ones():
    grammar = schema_to_gbnf({"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
                              "required": ["a"]})
    root_rule = grammar.splitlines()[1]
    assert root_rule.index('"\\"a\\""') < root_rule.index('"\\"b\\""')
    assert "string" in root_rule and "integer" in root_rule and 'string ":"' not in root_rule


def test_prompts_render_the_ggufs_own_template(runtime):
    rendered = ChatPrompter.for_runtime(runtime).render(MESSAGES)
    assert rendered.prompt == ("<|im_start|>system\nReply with one JSON object.<|im_end|>\n<|im_start|>user\n"
                               "Question: In which city was Ada Lovelace born?<|im_end|>\n<|im_start|>assistant\n")
    assert rendered.stop == ["<|im_end|>"] and not rendered.add_bos


def test_every_structured_schema_constrains_the_real_model_to_valid_json(runtime):
    prompt = ChatPrompter.for_runtime(runtime).render(MESSAGES).prompt
    for schema in _schemas():
        result = runtime.generate(prompt, max_tokens=200, grammar=schema_to_gbnf(schema))
        assert result.finish_reason == "stop", result
        jsonschema.validate(json.loads(result.text), schema)
    assert len(json.loads(result.text)["why"]) <= 5


def test_a_seed_repeats_a_sampled_reply_and_prefix_reuse_keeps_greedy_replies(runtime):
    prompt = ChatPrompter.for_runtime(runtime).render(MESSAGES).prompt
    first = runtime.generate(prompt, max_tokens=24, temperature=0.9, seed=7)
    assert runtime.generate(prompt, max_tokens=24, temperature=0.9, seed=7).text == first.text
    other = ChatPrompter.for_runtime(runtime).render([*MESSAGES[:1], {"role": "user", "content": "Say hi."}]).prompt
    runtime.generate(other, max_tokens=8)  # leaves the shared system prefix in the cache
    fresh = IkRuntime(find_local_gguf(), n_ctx=2048, n_threads=1)
    try:
        # Both evaluate the shared prefix in one batch and the rest in another, so the logits agree.
        fresh.generate(other, max_tokens=1)
        assert runtime.generate(prompt, max_tokens=16).text == fresh.generate(prompt, max_tokens=16).text
    finally:
        fresh.close()
    assert runtime.generate(prompt, max_tokens=3).finish_reason == "length"


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_server_answers_the_openai_chat_contract_with_schema_constrained_json():
    schema = _schemas()[0]
    with LocalModelServer(runtime="ik", n_threads=1, n_ctx=2048) as server:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as answer:
            assert [m["id"] for m in json.loads(answer.read())["data"]] == [LOCAL_MODEL_NAME]
        status, body = _post(f"{server.base_url}/chat/completions", {
            "model": LOCAL_MODEL_NAME, "messages": MESSAGES, "temperature": 0, "max_tokens": 200,
            "response_format": {"type": "json_object", "schema": schema}})
        assert status == 200, body
        choice = body["choices"][0]
        jsonschema.validate(json.loads(choice["message"]["content"]), schema)
        assert choice["finish_reason"] == "stop" and body["usage"]["prompt_tokens"] > 20
        assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        status, body = _post(f"{server.base_url}/chat/completions", {"model": LOCAL_MODEL_NAME, "messages": []})
        assert status == 400 and "messages" in body["error"]["message"]
        status, body = _post(f"{server.base_url}/chat/completions", {
            "model": LOCAL_MODEL_NAME, "messages": [{"role": "user", "content": "word " * 3000}]})
        assert status == 400 and "context holds 2048" in body["error"]["message"]


def test_a_prompt_evaluated_in_chunks_gives_the_logits_of_one_token_at_a_time(runtime):
    # ik_llama.cpp's GEMM path for chunks of 32+ tokens gave 0.64 correlation here (UBATCH's comment).
    import numpy as np

    tokens = runtime.tokenize(ChatPrompter.for_runtime(runtime).render(MESSAGES * 3).prompt)
    assert len(tokens) > 64
    runtime._cached = []
    runtime._evaluate(tokens)
    chunked = np.ctypeslib.as_array(runtime.context.get_logits(-1), shape=(runtime.n_vocab,)).copy()
    runtime.lib.llama_kv_cache_seq_rm(runtime.context.ctx, 0, 0, -1)
    runtime._cached = []
    for position, token in enumerate(tokens):
        runtime._decode([token], position)
    single = np.ctypeslib.as_array(runtime.context.get_logits(-1), shape=(runtime.n_vocab,))
    assert np.corrcoef(chunked, single)[0, 1] > 0.999 and chunked.argmax() == single.argmax()


def test_every_schema_trajscope_sends_compiles_to_a_grammar_llama_cpp_parses(runtime):
    from trajscope.engine.judges import VERDICT_SCHEMA
    from trajscope.engine.llm._ik_runtime import IkRuntimeError
    from trajscope.engine.scanners._attribute import JUDGE_SCHEMA
    from trajscope.engine.scanners._cluster import ASSIGN_SCHEMA, _themes_schema
    from trajscope.engine.scanners._rubric import RUBRIC_SCHEMA

    schemas = [ActionSpace(tool_schemas(t, "tools")).json_schema(ids) for t in ("read_gate", "arag")
               for ids in ((), ("demo:1", 'odd "id"'))]
    schemas += [ANSWER_SCHEMA, init_schema(5), update_schema(["R1"], ["c1"]), VERDICT_SCHEMA, RUBRIC_SCHEMA,
                JUDGE_SCHEMA, _themes_schema(3), ASSIGN_SCHEMA]
    vocab = runtime.api.llama_model_get_vocab(runtime.model.model)
    for schema in schemas:
        handle = runtime.lib.llama_sampler_init_grammar(vocab, schema_to_gbnf(schema).encode(), b"root")
        assert handle, schema
        runtime.lib.llama_grammar_free(handle)
    with pytest.raises(IkRuntimeError, match="did not parse"):
        runtime.generate("x", grammar="root ::= undefined-rule")
