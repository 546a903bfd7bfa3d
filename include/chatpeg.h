/* The chatpeg C API (C99): what Go (cgo), Rust (bindgen), Node (N-API) or any FFI binds.

   Requests, prepared requests, deltas and messages are UTF-8 JSON strings. Every string the
   library returns through a char** is the caller's, freed with chatpeg_free. Every call
   returns 0 or a CHATPEG_E_* code and then fills *err (when err is not NULL) with the code, a
   message and where (file:line:column, byte offset, JSON path; "" when unknown), freed with
   chatpeg_error_clear. A chatpeg_error starts zeroed (chatpeg_error err = {0};) and may be
   reused: each call clears it first. No C++ exception crosses this API. Output pointers are
   set only on success.

   A chatpeg_template is immutable: any number of threads may use one at once. A
   chatpeg_stream is one response: use it from one thread at a time.

     request_json   an OpenAI /v1/chat/completions body ({"messages", "tools", ...})
     prepared_json  {"prompt","generation_prompt","grammar","grammar_lazy",
                     "grammar_triggers":[{"type","value"}],"preserved_tokens","stops"}
     message_json   the OpenAI assistant message, as `chatpeg parse` prints it
     deltas_json    a JSON array of choices[0].delta objects, as `chatpeg parse --stream`
     result_json    {"deltas": [...], "message": {...}, "finish_reason": "stop"|"tool_calls"|"length"}
*/
#ifndef CHATPEG_H
#define CHATPEG_H

#include <stddef.h>

#include "chatpeg/api/export.h"
#include "chatpeg/version.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CHATPEG_OK = 0,
  CHATPEG_E_INVALID_ARGUMENT = 1, /* a request field or argument is unusable (NULL included) */
  CHATPEG_E_SYNTAX = 2,           /* JSON, Jinja or GBNF text is malformed */
  CHATPEG_E_NO_MATCH = 3,         /* the model output does not match the template's format */
  CHATPEG_E_LIMIT = 4,            /* a bound (size, depth, time) was hit */
  CHATPEG_E_UNSUPPORTED = 5,      /* well-formed but outside what chatpeg implements */
  CHATPEG_E_IO = 6,               /* a file could not be read */
  CHATPEG_E_TEMPLATE = 7,         /* the template raised or failed while rendering */
  CHATPEG_E_ANALYSIS = 8,         /* the template's tool-call format is unknown */
  CHATPEG_E_INTERNAL = 9,         /* a bug in chatpeg */
  CHATPEG_E_NO_MEMORY = 10        /* out of memory */
};

typedef struct chatpeg_template chatpeg_template;
typedef struct chatpeg_stream chatpeg_stream;
typedef struct {
  int code;      /* CHATPEG_OK or a CHATPEG_E_* code */
  char *message; /* what went wrong; NULL when code is CHATPEG_OK */
  char *where;   /* where it went wrong ("" when unknown); NULL when code is CHATPEG_OK */
} chatpeg_error;

/* CHATPEG_VERSION_STRING of the library actually linked. */
CHATPEG_API const char *chatpeg_version(void);

/* A .jinja file, a tokenizer_config.json or a GGUF model file. */
CHATPEG_API int chatpeg_template_from_file(const char *path, chatpeg_template **out,
                                           chatpeg_error *err);
/* Template source text (NUL-terminated UTF-8). */
CHATPEG_API int chatpeg_template_from_string(const char *source, chatpeg_template **out,
                                             chatpeg_error *err);
CHATPEG_API void chatpeg_template_free(chatpeg_template *t);

/* The analysis as JSON (`chatpeg analyze --json`). */
CHATPEG_API int chatpeg_template_analysis(const chatpeg_template *t, char **analysis_json,
                                          chatpeg_error *err);

CHATPEG_API int chatpeg_prepare(const chatpeg_template *t, const char *request_json,
                                char **prepared_json, chatpeg_error *err);
/* output: len bytes of model output (not necessarily NUL-terminated). */
CHATPEG_API int chatpeg_parse(const chatpeg_template *t, const char *request_json,
                              const char *output, size_t len, char **message_json,
                              chatpeg_error *err);

/* The stream keeps what it needs of t and request_json: both may be freed after this call. */
CHATPEG_API int chatpeg_stream_new(const chatpeg_template *t, const char *request_json,
                                   chatpeg_stream **out, chatpeg_error *err);
/* len bytes more of the model output; *deltas_json is "[]" when nothing is decided yet. */
CHATPEG_API int chatpeg_stream_feed(chatpeg_stream *s, const char *text, size_t len,
                                    char **deltas_json, chatpeg_error *err);
CHATPEG_API int chatpeg_stream_finish(chatpeg_stream *s, char **result_json, chatpeg_error *err);
CHATPEG_API void chatpeg_stream_free(chatpeg_stream *s);

/* Hugging Face response templates (the `response_template` of tokenizer_config.json). */
typedef struct chatpeg_response_template chatpeg_response_template;
/* A JSON file holding the template object or a tokenizer_config.json with one, or a GGUF
   model file (tokenizer.response_template). */
CHATPEG_API int chatpeg_response_template_from_file(const char *path,
                                                    chatpeg_response_template **out,
                                                    chatpeg_error *err);
/* JSON text: the template object, or a tokenizer_config.json holding one. */
CHATPEG_API int chatpeg_response_template_from_string(const char *json_text,
                                                      chatpeg_response_template **out,
                                                      chatpeg_error *err);
CHATPEG_API void chatpeg_response_template_free(chatpeg_response_template *t);
/* options_json: NULL or {"prefix": the rendered prompt, "tools": the request's tools (string
   arguments are cast by their schemas)}. message != 0: the OpenAI assistant message;
   0: the dict transformers' parse_response returns. */
CHATPEG_API int chatpeg_response_template_parse(const chatpeg_response_template *t,
                                                const char *options_json, const char *output,
                                                size_t len, int message, char **result_json,
                                                chatpeg_error *err);
/* A stream of OpenAI deltas read with the response template (chatpeg_stream_feed/_finish/
   _free as above); a call's arguments arrive whole at its region's close. */
CHATPEG_API int chatpeg_response_template_stream_new(const chatpeg_response_template *t,
                                                     const char *options_json,
                                                     chatpeg_stream **out, chatpeg_error *err);
/* A response template written from chatpeg's analysis of t (CHATPEG_E_UNSUPPORTED with the
   reason when the v1 format cannot express it). */
CHATPEG_API int chatpeg_write_response_template(const chatpeg_template *t, char **template_json,
                                                chatpeg_error *err);

/* Frees a string returned by this API (NULL is fine). */
CHATPEG_API void chatpeg_free(void *p);
/* Frees err's strings and resets it to CHATPEG_OK (NULL is fine). */
CHATPEG_API void chatpeg_error_clear(chatpeg_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CHATPEG_H */
