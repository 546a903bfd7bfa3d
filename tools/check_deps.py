#!/usr/bin/env python3
"""Fails when an #include crosses the module dependency rule of docs/architecture.md.

Each module (a folder under src/, its interface headers under src/include/chatpeg/<module>/ —
the api module's under include/chatpeg/api/, the installed public API — its tests under
tests/<module>/) may include only itself and the modules it declares below. Third-party
headers are confined too: nlohmann json only in the json module and the public API (whose
types use it), CLI11 only in cli, Asio only in http and server, httplib only in tests, pybind11 only in python, PCRE2 only in response. Usage: check_deps.py [project root]
"""
import pathlib
import re
import sys

LIBRARY = ["base", "json", "jinja", "peg", "grammar", "chat", "stream"]
ALLOWED = {
    "base": set(),
    "json": {"base"},
    "jinja": {"base", "json"},
    "peg": {"base"},
    "grammar": {"base", "json", "peg"},
    "chat": {"base", "json", "jinja", "peg", "grammar"},
    "stream": {"base", "json", "peg", "chat"},
    "response": {"base", "json", "chat", "stream"},
    "api": set(LIBRARY) | {"response"},
    "python": {"api"},
    "http": {"base"},
    "server": set(LIBRARY) | {"response", "http"},
    "cli": set(LIBRARY) | {"server", "response"},
    "conformance": set(LIBRARY) | {"response"},  # tests/conformance: end-to-end tests over all modules
}
# Third-party headers and the only modules that may include them.
THIRD_PARTY = {
    "nlohmann/": {"json", "api"},
    "pybind11/": {"python"},
    "CLI/": {"cli"},
    "httplib.h": set(),  # the tests' fake backends only
    "asio": {"http", "server"},
    "pcre2.h": {"response"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def module_of(path: pathlib.Path, root: pathlib.Path):
    rel = path.relative_to(root).parts
    if rel[:3] == ("src", "include", "chatpeg") and len(rel) > 4:
        return rel[3]
    if rel[0] in ("src", "tests") and len(rel) > 2:
        return rel[1]
    if rel[:2] == ("include", "chatpeg") and len(rel) > 3:
        return rel[2]
    if rel[0] == "include":
        return "api"  # chatpeg.h (C API), chatpeg/chatpeg.h (umbrella)
    return None


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = []
    files = [p for d in ("src", "include", "tests") for p in (root / d).rglob("*")
             if p.suffix in (".h", ".hpp", ".cpp") and p.is_file()]
    for path in sorted(files):
        mod = module_of(path, root)
        if mod is None or mod == "support":
            continue
        if mod not in ALLOWED:
            problems.append(f"{path.relative_to(root)}: module '{mod}' is not in the dependency table")
            continue
        is_test = path.relative_to(root).parts[0] == "tests"
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            target = m.group(2)
            where = f"{path.relative_to(root)}:{line}"
            for prefix, owners in THIRD_PARTY.items():
                if target.startswith(prefix) and mod not in owners and not is_test:
                    problems.append(f"{where}: module '{mod}' includes <{target}>, "
                                    f"allowed only in {sorted(owners)}")
            parts = target.split("/")
            if parts[0] == "chatpeg" and len(parts) > 2:
                dep = parts[1]
            elif m.group(1) == '"' and len(parts) > 1 and parts[0] in ALLOWED:
                dep = parts[0]  # a private header under src/<module>/
                if dep != mod and not is_test:
                    problems.append(f"{where}: includes private header {target} of module '{dep}'")
                    continue
            else:
                continue
            if dep != mod and dep not in ALLOWED[mod]:
                problems.append(f"{where}: module '{mod}' may not include module '{dep}' "
                                f"(allowed: {sorted(ALLOWED[mod]) or 'none'})")
    for p in problems:
        print(p)
    print(f"check_deps: {len(files)} files, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
