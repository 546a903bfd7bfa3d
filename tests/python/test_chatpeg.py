"""The chatpeg Python package: parse, stream (deltas add up to the message at chunk sizes
1/3/7), prepare, errors with .where, and one Template shared by threads parsing at once."""
import json
import os
import pathlib
import threading

import pytest

import chatpeg

EXAMPLES = pathlib.Path(os.environ.get("CHATPEG_SOURCE_DIR", pathlib.Path(__file__).parents[2])) / "examples"
REQUEST = json.loads((EXAMPLES / "weather_request.json").read_text())
OUTPUT = (EXAMPLES / "weather_output.txt").read_text()


@pytest.fixture(scope="module")
def template():
    return chatpeg.Template.from_file(str(EXAMPLES / "chatml_tools.jinja"))


def assemble(deltas):
    content, reasoning, calls = "", "", []
    for d in deltas:
        content += d.get("content", "")
        reasoning += d.get("reasoning_content", "")
        for c in d.get("tool_calls", []):
            if c["index"] == len(calls):
                calls.append({"id": c["id"], "name": c["function"]["name"], "arguments": ""})
            calls[c["index"]]["arguments"] += c["function"]["arguments"]
    return content, reasoning, calls


def test_parse_gives_the_openai_message(template):
    m = template.parse(OUTPUT, REQUEST)
    assert m["role"] == "assistant"
    assert m["content"] == "Let me check both cities.\n"
    assert "two cities" in m["reasoning_content"]
    assert [c["function"]["name"] for c in m["tool_calls"]] == ["get_weather"] * 2
    assert json.loads(m["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris", "unit": "celsius"}
    assert all(c["id"].startswith("call_") for c in m["tool_calls"])
    assert template.parse(OUTPUT.encode(), REQUEST)["content"] == m["content"]  # bytes too


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_stream_deltas_add_up_to_the_message(template, chunk):
    expected = template.parse(OUTPUT, REQUEST)
    s = template.stream(REQUEST)
    deltas = []
    data = OUTPUT.encode()  # byte pieces may cut UTF-8 sequences and markers
    for at in range(0, len(data), chunk):
        deltas += s.feed(data[at:at + chunk])
    done = s.finish()
    deltas += done["deltas"]
    assert done["finish_reason"] == "tool_calls"
    content, reasoning, calls = assemble(deltas)
    assert content == expected["content"]
    assert reasoning == expected["reasoning_content"]
    assert [c["arguments"] for c in calls] == [c["function"]["arguments"] for c in expected["tool_calls"]]
    assert [c["id"] for c in calls] == [c["id"] for c in done["message"]["tool_calls"]]
    assert s.received == len(data)


def test_prepare_and_render(template):
    p = template.prepare(REQUEST)
    assert set(p) >= {"prompt", "generation_prompt", "grammar", "grammar_lazy",
                      "grammar_triggers", "preserved_tokens", "stops"}
    assert p["prompt"].endswith(p["generation_prompt"])
    assert "get_weather" in p["grammar"]
    assert template.render(REQUEST) == p["prompt"]
    assert template.analysis["tools"]["format"] == "json_native"


@pytest.mark.parametrize("call, error, where", [
    (lambda t: t.prepare({"messages": 3}), chatpeg.InvalidArgumentError, "$.messages"),
    (lambda t: t.parse("x", {"messages": [], "tools": [{"type": "function"}]}),
     chatpeg.InvalidArgumentError, "$.tools[0]"),
    (lambda t: chatpeg.Template.from_string("a\n{% if %}"), chatpeg.InvalidSyntaxError, "2:"),
    (lambda t: chatpeg.Template.from_file("/nonexistent/t.jinja"), chatpeg.FileError,
     "/nonexistent/t.jinja"),
    (lambda t: t.stream(REQUEST).feed("abc", [1, 2]), chatpeg.InvalidArgumentError, "token_ids"),
])
def test_errors_carry_where(template, call, error, where):
    with pytest.raises(error) as info:
        call(template)
    assert isinstance(info.value, chatpeg.Error)
    assert where in info.value.where
    assert info.value.code == error.code


def test_requests_must_be_json(template):
    with pytest.raises(ValueError):
        template.prepare({"messages": [], "temperature": float("nan")})
    with pytest.raises(TypeError):
        template.prepare({"messages": [], "x": object()})


def test_a_template_is_shared_by_threads_parsing_at_once(template):
    expected = template.parse(OUTPUT, REQUEST)["tool_calls"][1]["function"]
    results = []

    def work():
        for _ in range(10):
            results.append(template.parse(OUTPUT, REQUEST)["tool_calls"][1]["function"] == expected)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 40


def test_version_is_the_library_version():
    # The package is laid out in <build>/python; the generated header is <build>/include.
    header = pathlib.Path(chatpeg.__file__).parents[2] / "include" / "chatpeg" / "version.h"
    assert f'#define CHATPEG_VERSION_STRING "{chatpeg.__version__}"' in header.read_text()


# ---- response templates ----

RT = {"start_anchor": "<<bot>>", "fields": {
    "reasoning_content": {"open": "[[r]]", "close": "[[/r]]"},
    "tool_calls": {"open": "<<call>>", "close": "<</call>>", "repeats": True, "content": "json",
                   "transform": {"type": "function", "function": {
                       "name": "{content.name}", "arguments": "{content.arguments}"}}},
    "content": {}}}
RT_OUTPUT = '[[r]]hm[[/r]]Hi.<<call>>{"name": "f", "arguments": {"n": "3"}}<</call>>'
RT_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}}}}]


def test_response_template_parses_as_dict_and_message():
    rt = chatpeg.ResponseTemplate.from_dict(RT)
    assert rt.source == RT
    d = rt.parse(RT_OUTPUT)
    assert d == {"reasoning_content": "hm", "content": "Hi.", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"n": "3"}}}]}
    m = rt.parse(RT_OUTPUT, tools=RT_TOOLS, message=True)
    assert m["content"] == "Hi." and m["reasoning_content"] == "hm"
    assert m["tool_calls"][0]["function"]["arguments"] == '{"n":3}'
    assert m["tool_calls"][0]["id"].startswith("call_")
    # A prompt that opens reasoning puts the output's start in it.
    assert rt.parse("still[[/r]]ok", prefix="<<bot>>[[r]]")["reasoning_content"] == "still"


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_response_template_stream_adds_up(chunk):
    rt = chatpeg.ResponseTemplate.from_dict(RT)
    s = rt.stream(tools=RT_TOOLS)
    deltas = []
    for i in range(0, len(RT_OUTPUT), chunk):
        deltas += s.feed(RT_OUTPUT[i:i + chunk])
    done = s.finish()
    deltas += done["deltas"]
    content, reasoning, calls = assemble(deltas)
    assert (content, reasoning) == ("Hi.", "hm")
    assert [(c["name"], c["arguments"]) for c in calls] == [("f", '{"n":3}')]
    assert done["finish_reason"] == "tool_calls"
    assert s.message == done["message"]


def test_response_template_errors_name_the_json_path():
    with pytest.raises(chatpeg.InvalidArgumentError) as e:
        chatpeg.ResponseTemplate.from_dict(
            {"start_anchor": "x", "fields": {"content": {"open": "a", "open_pattern": "b"}}})
    assert "$.fields.content.open_pattern" in e.value.where
    with pytest.raises(chatpeg.UnsupportedError):
        chatpeg.ResponseTemplate.from_dict({"chat_template": "x", "response_schema": {}})
    with pytest.raises(chatpeg.NoMatchError) as e:
        chatpeg.ResponseTemplate.from_dict(RT).parse("<<call>>{oops<</call>>")
    assert e.value.offset is not None


def test_a_template_writes_and_ships_response_templates(template, tmp_path):
    written = template.write_response_template()
    rt = chatpeg.ResponseTemplate.from_dict(written)
    m = rt.parse(OUTPUT, prefix=template.render(REQUEST), tools=REQUEST["tools"], message=True)
    ours = template.parse(OUTPUT, REQUEST)
    assert m["content"] == ours["content"].strip()
    assert [c["function"] for c in m["tool_calls"]] == [c["function"] for c in ours["tool_calls"]]
    assert template.shipped_response_template is None

    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": "{{ messages[0].content }}",
                                  "response_template": RT}))
    shipped = chatpeg.Template.from_file(str(config)).shipped_response_template
    assert shipped is not None and shipped.source == RT
    assert chatpeg.ResponseTemplate.from_file(str(config)).parse("x") == {"content": "x"}
