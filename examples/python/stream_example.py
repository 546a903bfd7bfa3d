"""Streams the bundled model output as OpenAI deltas with the chatpeg Python package, and
checks that they add up to the message parsed in one go.
Usage: python3 stream_example.py [examples dir]"""
import json
import pathlib
import sys

import chatpeg

here = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
template = chatpeg.Template.from_file(str(here / "chatml_tools.jinja"))
request = json.loads((here / "weather_request.json").read_text())
output = (here / "weather_output.txt").read_text()

print(f"chatpeg {chatpeg.__version__}: {template.analysis['tools']['format']} tool calls")
stream = template.stream(request)
deltas = []
for at in range(0, len(output), 6):
    deltas += stream.feed(output[at:at + 6])
done = stream.finish()
deltas += done["deltas"]
for d in deltas:
    print(json.dumps(d))
print("finish_reason:", done["finish_reason"])

content = "".join(d.get("content", "") for d in deltas)
calls = {}
for d in deltas:
    for c in d.get("tool_calls", []):
        calls.setdefault(c["index"], "")
        calls[c["index"]] += c["function"]["arguments"]
message = template.parse(output, request)
assert content == (message["content"] or ""), (content, message["content"])
assert [calls[i] for i in sorted(calls)] == [c["function"]["arguments"] for c in message["tool_calls"]]
print(json.dumps(message, indent=2))
