"""chatpeg: a model's raw output back into chat structure (content, reasoning_content,
tool_calls), from its Jinja chat template alone.

    t = chatpeg.Template.from_file("tokenizer_config.json")
    prepared = t.prepare(request)        # prompt, grammar, triggers, stops
    message = t.parse(output, request)   # the OpenAI assistant message
    s = t.stream(request)                # one per response
    for piece in pieces: deltas = s.feed(piece)
    done = s.finish()                    # {"deltas", "message", "finish_reason"}

Hugging Face response templates (the `response_template` of tokenizer_config.json):

    rt = chatpeg.ResponseTemplate.from_file("tokenizer_config.json")
    rt.parse(output, prefix=prompt)      # the dict transformers' parse_response returns
    rt.parse(output, tools=tools, message=True)   # the OpenAI assistant message
    rt.stream(prefix=prompt)             # a Stream, as above
    t.write_response_template()          # one written from chatpeg's analysis of t

Requests are dicts shaped like an OpenAI /v1/chat/completions body. A Template is immutable
and may be used by many threads at once (the GIL is released while chatpeg works); a Stream
belongs to one thread at a time. Errors raise chatpeg.Error subclasses with .where.
"""

from ._chatpeg import ResponseTemplate, Stream, Template, __version__
from ._errors import (AnalysisFailedError, Error, FileError, InternalError,
                      InvalidArgumentError, InvalidSyntaxError, LimitExceededError,
                      NoMatchError, TemplateError, UnsupportedError)

__all__ = [
    "Template", "Stream", "ResponseTemplate", "__version__", "Error", "InvalidArgumentError", "InvalidSyntaxError",
    "NoMatchError", "LimitExceededError", "UnsupportedError", "FileError", "TemplateError",
    "AnalysisFailedError", "InternalError",
]
