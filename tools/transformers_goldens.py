#!/usr/bin/env python3
"""Goldens for chatpeg's response-template interpreter, written by transformers' own parser.

transformers' `parse_response` / `ResponseParser` (src/transformers/utils/chat_parsing/ of a
transformers checkout given on the command line; nothing of it is kept here) reads:

  * invented cases: response templates and outputs this tool generates, covering every field
    option, every content parser and its arguments, the prefix, casting by the tools' schemas,
    and seeded random templates with random outputs over a small vocabulary of delimiters;
  * --written DUMP.jsonl: the response templates chatpeg writes for the corpus templates, with
    each round-trip case's prompt, tools and output (the conformance test
    ConformanceResponseRoundtrip.WrittenTemplatesReadTheCorpus writes the dump when
    CHATPEG_RESPONSE_DUMP names a file).

It writes the goldens (tests/response/data/transformers_goldens.json and, with --written,
tests/conformance/data/response_roundtrip_goldens.json): each case's one-shot dict (or that it
fails), and where transformers' own stream in chunks of 1, 3 or 7 characters ends differently,
that too ("streamed"; the tests hold chatpeg's streams to the one-shot dict).
Round-trip goldens hold only what chatpeg generated (the written template and transformers'
dict), keyed by template name and case id; the test reads the case itself from the corpus.
With --written it also reports how many of the written templates' cases transformers reads
as the corpus expects.

--fixtures CHATPEG_CLI runs the parse_response calls of transformers' own test module
(tests/utils/test_chat_parsing.py of the checkout) through chatpeg's CLI, one-shot and
streamed, and reports how many agree; nothing of them is written.

Needs Python's `regex` module (Debian: python3-regex).
"""

import argparse
import copy
import importlib.util
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import types

CHUNKS = (1, 3, 7)


# ---- loading transformers' parser ---------------------------------------------------------


def load_chat_parsing(checkout):
    """transformers.utils.chat_parsing from the checkout, without importing the rest of
    transformers: the two names it imports from its package are given here."""
    base = os.path.join(checkout, "src", "transformers", "utils", "chat_parsing")
    if not os.path.isfile(os.path.join(base, "response_parser.py")):
        sys.exit(f"no src/transformers/utils/chat_parsing/response_parser.py under {checkout}")
    root = types.ModuleType("transformers")
    root.__path__ = []
    utils = types.ModuleType("transformers.utils")
    utils.__path__ = []
    log = types.ModuleType("transformers.utils.logging")
    log.get_logger = logging.getLogger
    utils.logging = log
    chat_utils = types.ModuleType("transformers.utils.chat_template_utils")

    def get_json_schema(_fn):
        raise TypeError("tools given as Python functions are not used here")

    chat_utils.get_json_schema = get_json_schema
    for name, module in (
        ("transformers", root),
        ("transformers.utils", utils),
        ("transformers.utils.logging", log),
        ("transformers.utils.chat_template_utils", chat_utils),
    ):
        sys.modules[name] = module
    spec = importlib.util.spec_from_file_location(
        "transformers.utils.chat_parsing",
        os.path.join(base, "__init__.py"),
        submodule_search_locations=[base],
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return package


def checkout_commit(checkout, given):
    if given:
        return given
    try:
        return subprocess.run(
            ["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("the checkout is not a git work tree: give its commit with --commit")


def chunked(text, n):
    return [text[i : i + n] for i in range(0, len(text), n)] or [""]


def run_case(tf, template, output, prefix, tools):
    """{"expected": dict} or {"error": why}, plus "streamed": {n: result} where a stream in
    chunks of n characters ends differently."""

    # Each reading gets its own copy: transformers' parser appends to a list in `defaults`
    # itself, so a shared template would carry matches from one reading into the next.
    def one_shot():
        return tf.parse_response(output, copy.deepcopy(template), prefix=prefix, tools=tools or None)

    def streamed(n):
        parser = tf.ResponseParser(copy.deepcopy(template), prefix=prefix, tools=tools or None)
        for piece in chunked(output, n):
            parser.feed(piece)
        return parser.finalize()[0]

    def outcome(fn):
        try:
            value = fn()
            json.dumps(value, allow_nan=False)
            return {"expected": value}
        except Exception as e:  # noqa: BLE001 - every failure of the reader is a result
            return {"error": f"{type(e).__name__}: {e}"[:300]}

    result = outcome(one_shot)
    differ = {}
    for n in CHUNKS:
        s = outcome(lambda: streamed(n))
        if ("error" in s) != ("error" in result) or s.get("expected") != result.get("expected"):
            differ[str(n)] = s
    if differ:
        result["streamed"] = differ
    return result


# ---- invented cases -----------------------------------------------------------------------

ANCHOR = "<|assistant|>"
THINK = {"open": "<think>", "close": "</think>"}
CALL_JSON = {
    "open": "<tool_call>",
    "close": "</tool_call>",
    "repeats": True,
    "content": "json",
    "transform": {"type": "function", "function": "{content}"},
}


def tmpl(fields, **top):
    t = {"defaults": {"role": "assistant"}, "start_anchor": ANCHOR, "fields": fields}
    t.update(top)
    return t


def tool(name, **properties):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
    }


CAST_TOOLS = [
    tool(
        "f",
        i={"type": "integer"},
        n={"type": "number"},
        b={"type": "boolean"},
        z={"type": "null"},
        o={"type": "object"},
        a={"type": "array"},
        s={"type": "string"},
        u={"anyOf": [{"type": "integer"}, {"type": "string"}]},
        m={"type": ["null", "integer"]},
        nl={"type": "integer", "nullable": True},
        si={"type": ["string", "integer"]},
    ),
    tool("g", x={"type": "integer"}),
    {"type": "function", "function": {"name": "h"}},
]

XML_CALL = {
    "open_pattern": r"<tool_call>\s*<function=(?P<name>[^>\n]+)>",
    "close": "</tool_call>",
    "repeats": True,
    "content": "xml-inline",
    "content_args": {"tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"},
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
}


def handwritten():
    """(id, template, outputs, prefix, tools): each field option and content parser."""
    cases = []

    def add(name, template, outputs, prefix="", tools=None):
        cases.append((name, template, outputs, prefix, tools))

    basic = tmpl({"thinking": THINK, "tool_calls": CALL_JSON, "content": {"close": "<|im_end|>"}})
    add(
        "implicit",
        basic,
        [
            "plain answer",
            "  padded answer \n",
            "<think>plan</think>answer",
            "<think>\nplan\n</think>\n\nanswer<|im_end|>",
            'before<tool_call>{"name":"f","arguments":{"a":1}}</tool_call>',
            'before<tool_call>{"name":"f","arguments":{"a":1}}</tool_call>\n',
            'before<tool_call>{"name":"f","arguments":{}}</tool_call>after',
            "one<|im_end|>two",
            "one<|im_end|>",
            "<|im_end|>",
            "<think>unclosed thought",
            "<think></think>",
            "text<think>a</think>more<think>b</think>end",
            '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{"x":[1,2]}}</tool_call>',
            "<tool_call>not json</tool_call>",
            "<tool_call>",
            "</think>stray close",
            "<thi",
            "answer <tool_cal",
            "",
        ],
    )
    add("prefix_in_region", basic, ["plan</think>answer", "answer"], prefix="sys<|assistant|><think>")
    add("prefix_last_anchor", basic, ["x</think>y", "y"], prefix="<|assistant|>old<think>old</think><|assistant|>")
    add("prefix_no_anchor", basic, ["answer", "</think>answer"], prefix="no anchor <think>here")
    add("prefix_closed_region", basic, ["answer"], prefix="<|assistant|><think>done</think>pre ")
    add("prefix_partial_delim", basic, ["nk>plan</think>answer"], prefix="<|assistant|><thi")
    add(
        "anchor_list",
        tmpl({"thinking": THINK, "content": {}}, start_anchor=["<|a|>", "<|tool_response|>"]),
        ["x"],
        prefix="<|a|>q<|tool_response|><think>",
    )
    add(
        "anchor_pattern",
        tmpl({"thinking": THINK, "content": {}}, start_anchor_pattern=r"<\|turn\|>(?:model|assistant)\n"),
        ["x</think>y"],
        prefix="<|turn|>user\nq<|turn|>model\n<think>",
    )
    add(
        "no_implicit",
        tmpl({"thinking": THINK, "answer": {"open": "<a>", "close": "</a>"}}),
        ["dropped<think>t</think>dropped<a>kept</a>dropped", "nothing", "<a>x</a><a>y</a>"],
    )
    add(
        "zero_width_open",
        tmpl(
            {
                "thinking": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>"},
                "content": {"open": "<response>\n", "close_pattern": r"\n?</response>"},
                "tool_calls": CALL_JSON,
            }
        ),
        [
            "<think>some deliberation</think>\n\n<response>\nhi\n</response>\n</s>",
            "deliberation\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n</s>",
            "no close at all",
        ],
    )
    add(
        "zero_width_open_prefix",
        tmpl({"thinking": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>"}, "content": {}}),
        ["<think>a</think>b", "a</think>b"],
        prefix="<|assistant|>",
    )
    add(
        "tie_by_name",
        tmpl({"zeta": {"open": "<x>", "close": "</x>"}, "alpha": {"open": "<x>", "close": "</y>"}, "content": {}}),
        ["<x>body</y>rest</x>", "<x>body</x>"],
    )
    add(
        "tie_longest",
        tmpl({"short": {"open": "<x", "close": ">"}, "long": {"open": "<xx>", "close": "</xx>"}, "content": {}}),
        ["a<xx>b</xx>c", "a<xy>c"],
    )
    add(
        "tie_open_before_close",
        tmpl({"t": {"open": "<s>", "close": "</s>"}, "content": {"close": "<s>"}}),
        ["a<s>b</s>c", "a<s"],
    )
    add(
        "literal_lists",
        tmpl({"x": {"open": ["<a>", "<bb>"], "close": ["</a>", "</bb>"]}, "content": {"close": ["END", "ENDX"]}}),
        ["<a>1</bb>", "<bb>2</a>", "pre ENDX post", "pre END", "<a>x</a>ENDXY"],
    )
    add(
        "close_pattern_grows",
        tmpl({"c": {"open": "<c>", "close_pattern": r"</c>\s*", "repeats": True}, "content": {}}),
        ["<c>a</c>  \n<c>b</c>\n\ntext", "<c>a</c>   "],
    )
    add(
        "repeats",
        tmpl({"t": {"open": "<t>", "close": "</t>", "repeats": True}, "content": {"repeats": True}}),
        ["a<t>1</t>b<t>2</t>c", "<t>only</t>", "<t></t><t> </t>"],
    )
    add(
        "join",
        tmpl(
            {
                "thinking": {"open": "<think>", "close": "</think>", "repeats": True, "join": " "},
                "content": {"repeats": True, "join": ""},
            }
        ),
        ["<think>first</think>middle<think>second</think>done", "<think>only</think>", "a<think></think>b"],
    )
    add(
        "join_strip_false",
        tmpl({"content": {"repeats": True, "join": "|", "content_args": {"strip": False}}, "t": THINK}),
        [" a <think>x</think> b ", "<think>x</think>"],
    )
    add("join_not_string", tmpl({"x": {"open": "<x>", "close": "</x>", "repeats": True, "join": "", "content": "json"}}), ["<x>{}</x>", "<x>\"s\"</x>"])
    add(
        "defaults_kept_empty",
        {
            "defaults": {"role": "assistant", "content": "", "tool_calls": []},
            "start_anchor": ANCHOR,
            "fields": {"tool_calls": CALL_JSON, "content": {}},
        },
        ["", "hi", '<tool_call>{"name":"f","arguments":{}}</tool_call>', "x<tool_call>{}</tool_call> "],
    )
    add(
        "defaults_join",
        {
            "defaults": {"role": "assistant", "content": "pre"},
            "start_anchor": ANCHOR,
            "fields": {"content": {"repeats": True, "join": "+"}, "t": THINK},
        },
        ["a<think>x</think>b", ""],
    )
    add(
        "optional_false",
        tmpl({"content": {"open": "<r>", "close": "</r>", "optional": False}, "x": {}}),
        ["<r>yes</r>", "no", "<r></r>", "<r>   </r>"],
    )
    add(
        "optional_false_implicit",
        tmpl({"content": {"optional": False}, "t": THINK}),
        ["x", "<think>a</think>", "<think>a</think>  "],
    )
    add("no_close_runs_to_end", tmpl({"content": {"open": "<resp>"}}), ["<resp>hello world", "pre<resp> a <resp> b"])
    # content parsers
    scalar = lambda kind, args=None: tmpl(  # noqa: E731
        {"v": {"open": "<v>", "close": "</v>", "content": kind, **({"content_args": args} if args else {})}}
    )
    add("int", scalar("int"), ["<v>42</v>", "<v> -7 </v>", "<v>1_000</v>", "<v>+3</v>", "<v>007</v>", "<v>4.0</v>", "<v>x</v>", "<v>1__0</v>"])
    add("float", scalar("float"), ["<v>1.5</v>", "<v> 2 </v>", "<v>1e3</v>", "<v>.5</v>", "<v>5.</v>", "<v>1_0.2_5</v>", "<v>abc</v>"])
    add("bool", scalar("bool"), ["<v>true</v>", "<v>TRUE</v>", "<v>1</v>", "<v>0</v>", "<v>false</v>", "<v>yes</v>", "<v></v>"])
    add("bool_no_strip", scalar("bool", {"strip": False}), ["<v> true</v>", "<v>true</v>"])
    add("text_no_strip", scalar("text", {"strip": False}), ["<v>  a \n</v>", "<v>\u00a0b\u3000</v>"])
    add("text_unicode_strip", scalar("text"), ["<v>\u00a0b\u3000\u2028</v>", "<v>\x1c x \x85</v>"])
    add(
        "json",
        scalar("json"),
        [
            '<v>{"a": [1, 2.5, "x", null, true]}</v>',
            "<v> [1, 2] </v>",
            '<v>"s"</v>',
            "<v>{a: 1}</v>",
            "<v>{'a': 1}</v>",
            '<v>{"a": 1} trailing</v>',
            '<v>{"a": 1, "a": 2}</v>',
            "<v>\u00a0{}</v>",
            "<v></v>",
        ],
    )
    add("json_allow_non_json", scalar("json", {"allow_non_json": True}), ['<v>{"a":1}</v>', "<v>  plain text  </v>"])
    add("json_allow_non_json_no_strip", scalar("json", {"allow_non_json": True, "strip": False}), ["<v>  plain  </v>"])
    add(
        "json_unquoted",
        scalar("json", {"unquoted_keys": True}),
        ["<v>{a: 1, b_2: {c: [1]}}</v>", "<v>{ a: 1}</v>", '<v>{"k": "x,y:z"}</v>', "<v>{é: 1}</v>"],
    )
    add(
        "json_string_delims",
        scalar("json", {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]}),
        [
            '<v>{location:<|"|>Paris, France<|"|>,unit:<|"|>celsius<|"|>}</v>',
            '<v>{list:[<|"|>a<|"|>,<|"|>b "q"<|"|>],n:null,t:true,x:1}</v>',
            '<v>{s:<|"|>unclosed}</v>',
            '<v>{s:"normal"}</v>',
        ],
    )
    add(
        "json_two_delims",
        scalar("json", {"string_delims": [["«", "»"], ["<<", ">>"]]}),
        ['<v>{"a": «x», "b": <<y>>}</v>', "<v>[«\\n»]</v>"],
    )
    add(
        "xml_inline",
        tmpl({"tool_calls": XML_CALL, "content": {}}),
        [
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\ntext\n</parameter>\n</function>\n</tool_call>",
            "pre <tool_call><function=g>\n</function></tool_call>",
            "<tool_call><function=f><parameter=a>x</parameter><parameter=a>y</parameter></function></tool_call>",
            "<tool_call><function=f><parameter=a>  spaced  </parameter></function></tool_call>",
        ],
    )
    add(
        "xml_inline_value_parser",
        tmpl(
            {
                "tool_calls": {
                    **XML_CALL,
                    "content_args": {
                        "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                        "merge_duplicates": True,
                    },
                }
            }
        ),
        [
            '<tool_call><function=f><parameter=a>[{"c": 1}]</parameter><parameter=b>plain</parameter></function></tool_call>',
            "<tool_call><function=f><parameter=a>1</parameter><parameter=a>2</parameter><parameter=a>3</parameter></function></tool_call>",
        ],
    )
    add(
        "xml_inline_int_values",
        tmpl(
            {
                "v": {
                    "open": "<v>",
                    "close": "</v>",
                    "content": "xml-inline",
                    "content_args": {"tag_pattern": r"<(?P<key>\w+)=(?P<value>[^>]*)>", "value_parser": {"name": "int"}},
                }
            }
        ),
        ["<v><a=1><b= 2 ></v>", "<v><a=x></v>", "<v></v>"],
    )
    add(
        "kv_lines",
        scalar("kv-lines"),
        ["<v>name: alice\nage: 30</v>", "<v>a:b:c\nno separator\n\n k : v </v>", "<v>a: 1\na: 2</v>"],
    )
    add(
        "kv_lines_args",
        scalar("kv-lines", {"line_sep": ";", "kv_sep": "=", "strip": False, "value_parser": {"name": "text"}}),
        ["<v>a=1; b = 2;c=</v>"],
    )
    add("kv_lines_values", scalar("kv-lines", {"value_parser": {"name": "json"}}), ['<v>a: [1]\nb: {"c": true}</v>', "<v>a: nope</v>"])
    # transforms
    add(
        "transform_groups",
        tmpl(
            {
                "tool_calls": {
                    "open_pattern": r"<call name=\"(?P<name>\w+)\"(?: id=\"(?P<id>\w+)\")?>",
                    "close": "</call>",
                    "repeats": True,
                    "content": "json",
                    "transform": {"type": "function", "id": "{id}", "function": {"name": "{name}", "arguments": "{content}"}},
                }
            }
        ),
        ['<call name="f" id="c1">{"a": 1}</call>', '<call name="f">{"a": 1}</call>'],
    )
    add(
        "transform_dotted",
        tmpl(
            {
                "tool_calls": {
                    "open": "<tool>",
                    "close": "</tool>",
                    "repeats": True,
                    "content": "json",
                    "transform": {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.args}"}, "k": [1, "lit", None]},
                }
            }
        ),
        ['<tool>{"name": "f", "args": {"c": {"id": 7}}}</tool>', '<tool>{"name": "f"}</tool>', '<tool>"str"</tool>', '<tool>{"name": {"x": 1}, "args": [1]}</tool>'],
    )
    each = {
        "open": "<actions>",
        "close": "</actions>",
        "content": "json",
        "transform_each": True,
        "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
    }
    each_out = [
        '<actions>[{"tool_name": "a", "parameters": {"x": "1"}}, {"tool_name": "b", "parameters": {}}]</actions>',
        "<actions>[]</actions>",
        '<actions>{"tool_name": "a"}</actions>',
        "<actions>[1]</actions>",
        '<actions>[{"tool_name": "a", "parameters": {}}]</actions><actions>[{"tool_name": "b", "parameters": {}}]</actions>',
    ]
    add("transform_each", tmpl({"tool_calls": each}), each_out)
    add("transform_each_repeats", tmpl({"tool_calls": {**each, "repeats": True}}), each_out)
    add("transform_each_tools", tmpl({"tool_calls": {**each, "repeats": True}}), each_out[:1], tools=[tool("a", x={"type": "integer"})])
    # casting
    call = lambda args: '<tool_call>{"name": "f", "arguments": %s}</tool_call>' % json.dumps(args)  # noqa: E731
    add(
        "cast",
        tmpl({"tool_calls": CALL_JSON, "content": {}}),
        [
            call({"i": "007", "n": "1.50", "b": "TRUE", "z": "None", "o": '{"k": 1}', "a": "[1]", "s": "42"}),
            call({"i": " 12 ", "n": "3", "b": "0", "z": "nil", "o": "[1]", "a": "{}", "u": "5", "m": "null", "nl": "null", "si": "9"}),
            call({"i": "1.0", "n": "1e2", "u": "x", "m": "7", "nl": "8", "i2": "3"}),
            call({"i": ["1", "x", 2], "n": "inf", "b": "yes"}),
            call({"i": 5, "o": {"already": True}}),
            '<tool_call>{"name": "g", "arguments": {"x": "4"}}</tool_call><tool_call>{"name": "h", "arguments": {"x": "4"}}</tool_call>',
            '<tool_call>{"name": "g", "arguments": "{\\"x\\": \\"4\\"}"}</tool_call>',
            '<tool_call>{"name": "unknown", "arguments": {"x": "4"}}</tool_call>',
        ],
        tools=CAST_TOOLS,
    )
    add(
        "cast_xml",
        tmpl({"tool_calls": XML_CALL, "content": {}}),
        [
            "<tool_call>\n<function=f>\n<parameter=i>\n007\n</parameter>\n<parameter=o>\n{\"a\": [1]}\n</parameter>\n<parameter=s>\n7\n</parameter>\n</function>\n</tool_call>",
            "<tool_call><function=g><parameter=x>12</parameter><parameter=x>13</parameter></function></tool_call>",
        ],
        tools=CAST_TOOLS,
    )
    add(
        "cast_not_function_shaped",
        tmpl({"calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": True}}),
        ['<c>{"name": "g", "arguments": {"x": "4"}}</c>', '<c>{"function": {"name": "g", "arguments": {"x": "4"}}}</c>', '<c>[{"function": {"name": "g", "arguments": {"x": "5"}}}]</c>'],
        tools=CAST_TOOLS,
    )
    add("cast_no_tools", tmpl({"tool_calls": CALL_JSON}), [call({"i": "007"})], tools=[])
    # regex semantics
    add(
        "unicode_word",
        tmpl({"tool_calls": {"open_pattern": r"<(?P<name>\w+)>", "close": "</>", "repeats": True, "transform": {"name": "{name}", "text": "{content}"}}, "content": {}}),
        ["<größe>x</><日本>y</>", "<a b>z</>"],
    )
    add(
        "lookaround",
        tmpl({"t": {"open_pattern": r"(?<=\n)##", "close_pattern": r"(?=\n)"}, "content": {}}),
        ["a\n## head\nbody", "## not after newline\n"],
    )
    add("dotall", tmpl({"t": {"open_pattern": r"<t .*?>", "close": "</t>"}, "content": {}}), ['<t a="1\n2">x</t>y'])
    add("multibyte_split", tmpl({"t": {"open": "«", "close": "»"}, "content": {}}), ["é«ü»ñ", "日本«語»"])
    return cases


VOCAB = ["<a>", "</a>", "<b>", "</b>", "[", "]", "|", "\n", " ", "x", "yz", '{"k": 1}', "7", "<", "a>"]


def random_cases(count, seed):
    """Seeded random templates (opens, closes, repeats, join, content parsers) and outputs made
    of their delimiters and a little text."""
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        fields = {}
        delims = [("<a>", "</a>"), ("<b>", "</b>"), ("[", "]")]
        rng.shuffle(delims)
        for name, (o, c) in zip(("r", "s", "t"), delims[: rng.randint(1, 3)]):
            f = {}
            f["open"] = o if rng.random() < 0.7 else [o, o + "\n"]
            if rng.random() < 0.85:
                f["close"] = c if rng.random() < 0.7 else [c]
            if rng.random() < 0.3:
                f["open_pattern"] = "(?:%s)\\s*" % "".join("\\" + ch if not ch.isalnum() else ch for ch in o)
                del f["open"]
            kind = rng.choice(["text", "text", "int", "bool", "json", "kv-lines"])
            if kind != "text":
                f["content"] = kind
            if rng.random() < 0.4:
                f["repeats"] = True
                if kind in ("text", "kv-lines") and rng.random() < 0.5 and kind == "text":
                    f["join"] = rng.choice(["", " ", ","])
            if kind == "text" and rng.random() < 0.2:
                f["content_args"] = {"strip": False}
            fields[name] = f
        if rng.random() < 0.8:
            implicit = {}
            if rng.random() < 0.4:
                implicit["close"] = rng.choice(["|", "\n\n", ["|", "||"]])
            if rng.random() < 0.3:
                implicit["repeats"] = True
                if rng.random() < 0.5:
                    implicit["join"] = " "
            fields["content"] = implicit
        template = tmpl(fields)
        outputs = []
        for _ in range(4):
            outputs.append("".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 14))))
        cases.append((f"random{i:03d}", template, outputs, "", None))
    return cases


def invented_goldens(tf, commit, seed, random_count):
    out = {
        "provenance": {
            "reader": "transformers.utils.chat_parsing (parse_response, ResponseParser)",
            "transformers_commit": commit,
            "generator": "tools/transformers_goldens.py",
            "random_seed": seed,
            "chunks": list(CHUNKS),
        },
        "templates": {},
        "cases": [],
    }
    for name, template, outputs, prefix, tools in handwritten() + random_cases(random_count, seed):
        out["templates"][name] = template
        for k, output in enumerate(outputs):
            case = {"id": f"{name}.{k}", "template": name, "prefix": prefix, "output": output}
            if tools:
                case["tools"] = tools
            case.update(run_case(tf, template, output, prefix, tools))
            out["cases"].append(case)
    return out


# ---- written templates x round-trip cases -------------------------------------------------


def message_of(d):
    """The dict as {content, reasoning_content, tool_calls: [{name, arguments}]}; None when a
    tool call is not one (a list of lists, a call without a name)."""
    msg = {"content": "", "reasoning_content": "", "tool_calls": []}
    for key, value in d.items():
        if key == "content":
            msg["content"] = value if isinstance(value, str) else json.dumps(value)
        elif key in ("thinking", "reasoning", "reasoning_content"):
            msg["reasoning_content"] = value if isinstance(value, str) else json.dumps(value)
        elif key == "tool_calls":
            for call in value if isinstance(value, list) else [value]:
                fn = call.get("function", call) if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                    return None
                args = fn.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        return None
                msg["tool_calls"].append({"name": fn["name"], "arguments": args})
    return msg


def reads_right(d, expected):
    msg = message_of(d)
    if msg is None:
        return False
    if msg["content"].strip() != (expected.get("content") or "").strip():
        return False
    if msg["reasoning_content"].strip() != (expected.get("reasoning_content") or "").strip():
        return False
    calls = expected.get("tool_calls") or []
    if len(calls) != len(msg["tool_calls"]):
        return False
    return all(a["name"] == b["name"] and a["arguments"] == b["arguments"] for a, b in zip(msg["tool_calls"], calls))


def written_goldens(tf, commit, dump):
    specs, cases, per_template = {}, [], {}
    with open(dump, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        key = json.dumps(row["spec"], sort_keys=True)
        spec_id = specs.setdefault(key, (f"{row['template']}#{len(specs)}", row["spec"]))[0]
        result = run_case(tf, row["spec"], row["output"], row["prefix"], row.get("tools"))
        right = "expected" in result and reads_right(result["expected"], row["expected"])
        t = per_template.setdefault(row["template"], [0, 0])
        t[0] += 1
        t[1] += right
        cases.append({"template": row["template"], "case": row["case"], "spec": spec_id, "reads_right": right, **result})
    return {
        "provenance": {
            "reader": "transformers.utils.chat_parsing (parse_response, ResponseParser)",
            "transformers_commit": commit,
            "generator": "tools/transformers_goldens.py --written",
            "chunks": list(CHUNKS),
        },
        "specs": {spec_id: spec for spec_id, spec in specs.values()},
        "cases": cases,
    }, per_template


# ---- transformers' own fixtures through chatpeg's CLI -------------------------------------


def collect_fixtures(tf, checkout):
    """Every parse_response call transformers' test module makes (template, output, prefix,
    tools) with transformers' answer, by running its tests with parse_response recorded."""
    path = os.path.join(checkout, "tests", "utils", "test_chat_parsing.py")
    calls = []
    real = tf.parse_response

    def recording(text, template, *, prefix=None, tools=None):
        entry = {"template": template, "output": text, "prefix": prefix, "tools": tools}
        try:
            entry["expected"] = real(text, template, prefix=prefix, tools=tools)
        except Exception as e:
            entry["error"] = f"{type(e).__name__}: {e}"[:200]
            calls.append(entry)
            raise
        calls.append(entry)
        return entry["expected"]

    fake = types.ModuleType("transformers.testing_utils")
    fake.require_torch = lambda f: f
    sys.modules["transformers.testing_utils"] = fake
    sys.modules["transformers"].AutoTokenizer = None
    chat_parsing = sys.modules["transformers.utils.chat_parsing"]
    chat_parsing.parse_response = recording
    spec = importlib.util.spec_from_file_location("tf_chat_parsing_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import unittest

    suite = unittest.TestSuite()
    for name in dir(module):
        obj = getattr(module, name)
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(obj))
    unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)
    chat_parsing.parse_response = real
    # one entry per distinct call that reads (prefix given)
    seen, out = set(), []
    for c in calls:
        if c["prefix"] is None:
            continue
        try:  # tools given as Python functions are for Python readers only
            json.dumps(c["tools"])
        except TypeError:
            continue
        key = json.dumps([c["template"], c["output"], c["prefix"], c["tools"]], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def chatpeg_reads(cli, template, output, prefix, tools, chunk=None):
    with tempfile.TemporaryDirectory() as d:
        rt, pf, rq = (os.path.join(d, n) for n in ("rt.json", "prefix.txt", "request.json"))
        with open(rt, "w", encoding="utf-8") as f:
            json.dump(template, f)
        with open(pf, "w", encoding="utf-8") as f:
            f.write(prefix or "")
        cmd = [cli, "parse", "--response-template", rt, "--raw", "--prefix-file", pf]
        if tools:
            with open(rq, "w", encoding="utf-8") as f:
                json.dump({"messages": [], "tools": tools}, f)
            cmd += ["--request", rq]
        if chunk:
            cmd += ["--stream", "--chunk", str(chunk)]
        r = subprocess.run(cmd, input=output.encode(), capture_output=True)
        if r.returncode != 0:
            return {"error": r.stderr.decode(errors="replace")[:200]}
        lines = r.stdout.decode().strip().splitlines()
        last = json.loads(lines[-1]) if lines else {}
        return {"expected": last["message"] if chunk else last}


def fixtures_report(tf, checkout, cli):
    fixtures = collect_fixtures(tf, checkout)
    agree = {"one-shot": 0, **{f"stream {n}": 0 for n in CHUNKS}}
    for c in fixtures:
        want = {"expected": c["expected"]} if "expected" in c else {"error": c["error"]}
        label = c["output"][:60].replace("\n", "\\n")
        for mode, chunk in [("one-shot", None)] + [(f"stream {n}", n) for n in CHUNKS]:
            got = chatpeg_reads(cli, c["template"], c["output"], c["prefix"], c["tools"], chunk)
            same = ("error" in got) == ("error" in want) and got.get("expected") == want.get("expected")
            agree[mode] += same
            if not same:
                print(f"  DIFF {mode}: {label!r}\n    transformers: {json.dumps(want)[:300]}\n    chatpeg:      {json.dumps(got)[:300]}")
    for mode, n in agree.items():
        print(f"transformers' fixtures, {mode}: {n}/{len(fixtures)} equal")
    return all(n == len(fixtures) for n in agree.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transformers", required=True, help="path to a transformers checkout")
    ap.add_argument("--commit", help="the checkout's commit (default: git rev-parse HEAD in it)")
    ap.add_argument("--out", help="invented-case goldens to write")
    ap.add_argument("--written", help="dump of written templates x round-trip cases (JSONL)")
    ap.add_argument("--written-out", help="round-trip goldens to write (with --written)")
    ap.add_argument("--fixtures", metavar="CHATPEG_CLI", help="compare transformers' own test calls")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--random", type=int, default=120, help="random templates (4 outputs each)")
    args = ap.parse_args()
    tf = load_chat_parsing(args.transformers)
    ok = True
    if args.out:
        commit = checkout_commit(args.transformers, args.commit)
        g = invented_goldens(tf, commit, args.seed, args.random)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(g, f, indent=1, ensure_ascii=False)
            f.write("\n")
        errors = sum("error" in c for c in g["cases"])
        streamed = sum("streamed" in c for c in g["cases"])
        print(f"invented: {len(g['cases'])} cases ({errors} fail in transformers, {streamed} stream differently) -> {args.out}")
    if args.written:
        commit = checkout_commit(args.transformers, args.commit)
        g, per_template = written_goldens(tf, commit, args.written)
        if args.written_out:
            with open(args.written_out, "w", encoding="utf-8") as f:
                json.dump(g, f, indent=1, ensure_ascii=False)
                f.write("\n")
        total = sum(t[0] for t in per_template.values())
        right = sum(t[1] for t in per_template.values())
        for name, (n, r) in sorted(per_template.items()):
            print(f"  {name}: {r}/{n}")
        print(f"written templates: {len(per_template)}; round-trip cases transformers reads right: {right}/{total}")
    if args.fixtures:
        ok = fixtures_report(tf, args.transformers, args.fixtures) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
