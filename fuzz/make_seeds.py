#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora and dictionaries into a build directory.

  make_seeds.py --source <repo> --shared <shared dir, may be absent> --out <build>/fuzz

Seeds come from the shared conformance data when it is present (templates, render
scenarios, llama.cpp cases' requests, outputs and tool schemas) plus the small hand-written
seeds in fuzz/seeds/<target>/ and the bundled examples. Dictionaries are fuzz/dict/*.dict
concatenated per target. Nothing from the shared data is ever written into the source tree.
"""
import argparse
import hashlib
import json
import os
import struct

DICTS = {
    "jinja_parse": ["jinja"],
    "jinja_render": ["jinja", "json"],
    "peg_match": ["markers"],
    "schema_to_grammar": ["json", "schema"],
    "gbnf_check": ["gbnf"],
    "stream_session": ["markers", "json"],
    "request_adapter": ["json", "schema", "markers"],
    "api_translate": ["json", "schema"],
    "response_template": ["json", "markers"],
    "http_request": ["http"],
}
STREAM_CONFIGS = 10  # keep in sync with configs() in stream_session.cpp


def write_seed(out_dir, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def load_cases(shared):
    path = os.path.join(shared, "conformance", "llamacpp", "cases.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def peg_program(ops, text):
    """A peg_match input: description length, description bytes, input."""
    desc = bytes(ops)
    return bytes([len(desc)]) + desc + text.encode("utf-8")


def lit(s):
    # op 0 with the characters as indices into peg_match's alphabet
    alphabet = 'ab<>/{}"\\x \n:,[]0é'
    out = [0, len(s)]
    for ch in s:
        out.append(alphabet.index(ch))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    src, shared = args.source, args.shared
    have_shared = os.path.isdir(os.path.join(shared, "conformance"))
    seeds = {t: os.path.join(args.out, "seeds", t) for t in DICTS}
    for d in seeds.values():
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            os.remove(os.path.join(d, old))

    # Hand-written seeds: fuzz/seeds/<target>/*.
    for t, d in seeds.items():
        hand = os.path.join(src, "fuzz", "seeds", t)
        if os.path.isdir(hand):
            for name in sorted(os.listdir(hand)):
                write_seed(d, read(os.path.join(hand, name)))

    templates = [read(os.path.join(src, "examples", "chatml_tools.jinja"))]
    tdir = os.path.join(src, "fuzz", "templates")
    templates += [read(os.path.join(tdir, n)) for n in sorted(os.listdir(tdir))]
    scenarios = [read(os.path.join(src, "examples", "weather_request.json"))]
    cases = []
    if have_shared:
        sdir = os.path.join(shared, "templates")
        templates += [read(os.path.join(sdir, n)) for n in sorted(os.listdir(sdir))
                      if n.endswith(".jinja")]
        rdir = os.path.join(shared, "conformance", "render", "scenarios")
        scenarios += [read(os.path.join(rdir, n)) for n in sorted(os.listdir(rdir))]
        cases = load_cases(shared)

    # jinja_parse: template texts. jinja_render: template NUL context.
    for i, t in enumerate(templates):
        write_seed(seeds["jinja_parse"], t)
        ctx = json.loads(scenarios[i % len(scenarios)])
        ctx.setdefault("bos_token", "<s>")
        ctx.setdefault("eos_token", "</s>")
        write_seed(seeds["jinja_render"], t + b"\0" + json.dumps(ctx).encode("utf-8"))

    # request_adapter: request bodies.
    for s in scenarios:
        write_seed(seeds["request_adapter"], s)
    seen = set()
    for c in cases:
        body = json.dumps(c["request"], ensure_ascii=False)
        if body not in seen:
            seen.add(body)
            write_seed(seeds["request_adapter"], body)

    # schema_to_grammar: tool parameter schemas, with a call's arguments as instance.
    seen = set()
    for c in cases:
        tools = {t["function"]["name"]: t["function"].get("parameters", {})
                 for t in c["request"].get("tools", []) if "function" in t}
        calls = c.get("expected", {}).get("tool_calls", [])
        for name, params in tools.items():
            text = json.dumps(params, ensure_ascii=False)
            instance = ""
            for call in calls:
                fn = call.get("function", call)
                if fn.get("name") == name:
                    instance = fn.get("arguments", "")
                    if not isinstance(instance, str):
                        instance = json.dumps(instance, ensure_ascii=False)
            key = (text, instance)
            if key in seen:
                continue
            seen.add(key)
            data = text if not instance else text + "\0" + instance
            write_seed(seeds["schema_to_grammar"], data)
        rf = c["request"].get("response_format")
        if isinstance(rf, dict) and isinstance(rf.get("json_schema"), dict):
            schema = rf["json_schema"].get("schema")
            if schema is not None:
                write_seed(seeds["schema_to_grammar"], json.dumps(schema, ensure_ascii=False))

    # stream_session: outputs for every configuration, whole and in small chunks.
    outputs = [read(os.path.join(src, "examples", "weather_output.txt"))]
    seen = set()
    for c in cases:
        out = c.get("output", "")
        if out and out not in seen:
            seen.add(out)
            outputs.append(out.encode("utf-8"))
    hand = os.path.join(src, "fuzz", "seeds", "stream_outputs")
    if os.path.isdir(hand):
        outputs += [read(os.path.join(hand, n)) for n in sorted(os.listdir(hand))]
    for i, out in enumerate(outputs):
        config = i % STREAM_CONFIGS
        chunking = [bytes([0]), bytes([1, 0]), bytes([3, 2, 6, 15])][i % 3]
        write_seed(seeds["stream_session"], bytes([config]) + chunking + out)
    for config in range(STREAM_CONFIGS):
        for out in outputs[:1] + outputs[-4:]:
            write_seed(seeds["stream_session"], bytes([config, 2, 0, 4]) + out)

    # gbnf_check: the bundled grammar with its sample, plus small grammars.
    write_seed(seeds["gbnf_check"], read(os.path.join(src, "examples", "tool_call.gbnf")) +
               b"\0" + read(os.path.join(src, "examples", "tool_call.txt")))

    # peg_match: a few programs (see decode() in peg_match.cpp for the opcodes).
    programs = [
        (lit("<a>") + [4, 3, 3, 1, 2, 13, 1, 6] + lit("</a>") + [6, 17], "<a>xy</a>"),
        ([16, 17], '{"a": [1, 2, "x\\n"], "b": null}'),
        ([4, 2, 3, 1, 13, 1] + lit("<a") + [16, 8, 14, 0, 15, 0, 9, 6, 6], 'x <a{"b":1}'),
        ([0, 1, 1, 15, 0, 6, 0, 1, 2, 7, 14, 0, 17, 6], "aaab"),
        ([3, 0x18, 10, 1, 6, 9, 0x0D, 18, 6], "ab\u00e9<>"),
        ([5, 2, 3, 4, 2, 5, 6, 13, 2, 12, 19, 6, 2, 8], 'ab"/x" </'),
    ]
    for ops, text in programs:
        write_seed(seeds["peg_match"], peg_program(ops, text))

    # Dictionaries.
    os.makedirs(os.path.join(args.out, "dict"), exist_ok=True)
    for t, names in DICTS.items():
        with open(os.path.join(args.out, "dict", t + ".dict"), "w", encoding="utf-8") as f:
            for n in names:
                with open(os.path.join(src, "fuzz", "dict", n + ".dict"), encoding="utf-8") as d:
                    f.write(d.read())
                f.write("\n")
    counts = {t: len(os.listdir(d)) for t, d in seeds.items()}
    print("fuzz seeds (%s): %s" % ("with shared data" if have_shared else "no shared data",
                                   ", ".join("%s %d" % kv for kv in counts.items())))


if __name__ == "__main__":
    main()
