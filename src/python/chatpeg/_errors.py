"""The exceptions of chatpeg: one subclass of Error per error code of the library."""

from typing import Optional


class Error(Exception):
    """A chatpeg error: .code (e.g. "no_match"), .where ("file:line:column, byte N, at
    $.json.path", "" when unknown) and .offset (byte offset into the input, or None)."""

    code = "internal_error"

    def __init__(self, message: str, where: str = "", offset: Optional[int] = None):
        super().__init__(f"{message} ({where})" if where else message)
        self.message = message
        self.where = where
        self.offset = offset


class InvalidArgumentError(Error):
    """A request field, option or argument is unusable."""
    code = "invalid_argument"


class InvalidSyntaxError(Error):
    """JSON, Jinja or GBNF text is malformed."""
    code = "syntax_error"


class NoMatchError(Error):
    """The model output does not match the template's format (.offset: where it stops)."""
    code = "no_match"


class LimitExceededError(Error):
    """A bound (size, depth, time) was hit."""
    code = "limit_exceeded"


class UnsupportedError(Error):
    """Well-formed, but outside what chatpeg implements."""
    code = "unsupported"


class FileError(Error):
    """A file could not be read."""
    code = "io_error"


class TemplateError(Error):
    """The template raised or failed while rendering."""
    code = "template_error"


class AnalysisFailedError(Error):
    """The template's tool-call format could not be determined."""
    code = "analysis_failed"


class InternalError(Error):
    """A bug in chatpeg."""
    code = "internal_error"


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, InvalidSyntaxError, NoMatchError, LimitExceededError,
    UnsupportedError, FileError, TemplateError, AnalysisFailedError, InternalError)}


def make_error(code: str, message: str, where: str, offset: Optional[int]) -> Error:
    return _BY_CODE.get(code, InternalError)(message, where, offset)
