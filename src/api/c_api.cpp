// The C API (chatpeg.h) over the C++ API: every entry point runs its body inside guarded(),
// which turns api::error, std::bad_alloc and any other exception into a return code and a
// filled chatpeg_error, so no C++ exception crosses into C. Strings handed out are malloc'd
// copies the caller frees with chatpeg_free.
#include "chatpeg.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "api/convert.h"
#include "chatpeg/api/response_template.h"
#include "chatpeg/api/template.h"
#include "chatpeg/json/json.h"

struct chatpeg_template {
  chatpeg::api::chat_template value;
};

struct chatpeg_stream {
  chatpeg::api::response_stream value;
};

struct chatpeg_response_template {
  chatpeg::api::response_template value;
};

namespace {

using chatpeg::api::error;
using chatpeg::api::error_code;
using chatpeg::api::json;

char* copy_string(std::string_view s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

void fill(chatpeg_error* err, int code, std::string_view message, std::string_view where) {
  if (err == nullptr) return;
  chatpeg_error_clear(err);
  err->code = code;
  err->message = static_cast<char*>(std::malloc(message.size() + 1));
  err->where = static_cast<char*>(std::malloc(where.size() + 1));
  if (err->message == nullptr || err->where == nullptr) {  // keep the code, drop the text
    std::free(err->message);
    std::free(err->where);
    err->message = nullptr;
    err->where = nullptr;
    return;
  }
  std::memcpy(err->message, message.data(), message.size());
  err->message[message.size()] = '\0';
  std::memcpy(err->where, where.data(), where.size());
  err->where[where.size()] = '\0';
}

template <class F>
int guarded(chatpeg_error* err, F&& body) {
  try {
    body();
    if (err != nullptr) chatpeg_error_clear(err);
    return CHATPEG_OK;
  } catch (const error& e) {
    fill(err, static_cast<int>(e.code()), e.what(), e.where());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    fill(err, CHATPEG_E_NO_MEMORY, "out of memory", "");
    return CHATPEG_E_NO_MEMORY;
  } catch (const std::exception& e) {
    fill(err, CHATPEG_E_INTERNAL, e.what(), "");
    return CHATPEG_E_INTERNAL;
  } catch (...) {
    fill(err, CHATPEG_E_INTERNAL, "unknown exception", "");
    return CHATPEG_E_INTERNAL;
  }
}

void require(const void* p, const char* name) {
  if (p == nullptr) {
    throw error(error_code::invalid_argument, std::string(name) + " is NULL", name);
  }
}

// A request argument: JSON text, parse errors with the byte offset and line:column.
json request_of(const char* request_json) {
  require(request_json, "request_json");
  return chatpeg::api::detail::take(chatpeg::json::parse(request_json, {.file = "request_json"}));
}

// A response template's options: NULL, or {"prefix": string, "tools": array}.
chatpeg::api::response_parse_options response_options_of(const char* options_json) {
  chatpeg::api::response_parse_options o;
  if (options_json == nullptr) return o;
  const json j =
      chatpeg::api::detail::take(chatpeg::json::parse(options_json, {.file = "options_json"}));
  if (!j.is_object()) {
    throw error(error_code::invalid_argument, "options_json must be an object", "options_json $");
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "prefix" && value.is_string()) {
      o.prefix = value.get<std::string>();
    } else if (key == "tools" && value.is_array()) {
      o.tools = value;
    } else {
      throw error(error_code::invalid_argument,
                  key == "prefix" || key == "tools"
                      ? key + (key == "prefix" ? " must be a string" : " must be an array")
                      : "unknown option \"" + key + "\" (prefix, tools)",
                  "options_json $." + key);
    }
  }
  return o;
}

std::string_view bytes_of(const char* data, std::size_t len) {
  if (len > 0) require(data, "output");
  return len > 0 ? std::string_view(data, len) : std::string_view();
}

}  // namespace

extern "C" {

const char* chatpeg_version(void) {
  return CHATPEG_VERSION_STRING;
}

int chatpeg_template_from_file(const char* path, chatpeg_template** out, chatpeg_error* err) {
  return guarded(err, [&] {
    require(path, "path");
    require(out, "out");
    *out = new chatpeg_template{chatpeg::api::chat_template::from_file(path)};
  });
}

int chatpeg_template_from_string(const char* source, chatpeg_template** out, chatpeg_error* err) {
  return guarded(err, [&] {
    require(source, "source");
    require(out, "out");
    *out = new chatpeg_template{chatpeg::api::chat_template::from_string(source)};
  });
}

void chatpeg_template_free(chatpeg_template* t) {
  delete t;
}

int chatpeg_template_analysis(const chatpeg_template* t, char** analysis_json, chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "template");
    require(analysis_json, "analysis_json");
    *analysis_json = copy_string(chatpeg::json::dump(t->value.analysis()));
  });
}

int chatpeg_prepare(const chatpeg_template* t, const char* request_json, char** prepared_json,
                    chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "template");
    require(prepared_json, "prepared_json");
    const json req = request_of(request_json);
    *prepared_json = copy_string(chatpeg::json::dump(t->value.prepare(req).to_json()));
  });
}

int chatpeg_parse(const chatpeg_template* t, const char* request_json, const char* output,
                  size_t len, char** message_json, chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "template");
    require(message_json, "message_json");
    if (len > 0) require(output, "output");
    const json req = request_of(request_json);
    const std::string_view text = len > 0 ? std::string_view(output, len) : std::string_view();
    *message_json = copy_string(chatpeg::json::dump(t->value.parse(text, req)));
  });
}

int chatpeg_stream_new(const chatpeg_template* t, const char* request_json, chatpeg_stream** out,
                       chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "template");
    require(out, "out");
    const json req = request_of(request_json);
    *out = new chatpeg_stream{t->value.stream(req)};
  });
}

int chatpeg_stream_feed(chatpeg_stream* s, const char* text, size_t len, char** deltas_json,
                        chatpeg_error* err) {
  return guarded(err, [&] {
    require(s, "stream");
    require(deltas_json, "deltas_json");
    if (len > 0) require(text, "text");
    const std::string_view piece = len > 0 ? std::string_view(text, len) : std::string_view();
    *deltas_json = copy_string(chatpeg::json::dump(s->value.feed(piece)));
  });
}

int chatpeg_stream_finish(chatpeg_stream* s, char** result_json, chatpeg_error* err) {
  return guarded(err, [&] {
    require(s, "stream");
    require(result_json, "result_json");
    auto done = s->value.finish();
    json j = json::object();
    j["deltas"] = std::move(done.deltas);
    j["message"] = std::move(done.message);
    j["finish_reason"] = done.finish_reason;
    *result_json = copy_string(chatpeg::json::dump(j));
  });
}

void chatpeg_stream_free(chatpeg_stream* s) {
  delete s;
}

int chatpeg_response_template_from_file(const char* path, chatpeg_response_template** out,
                                        chatpeg_error* err) {
  return guarded(err, [&] {
    require(path, "path");
    require(out, "out");
    *out = new chatpeg_response_template{chatpeg::api::response_template::from_file(path)};
  });
}

int chatpeg_response_template_from_string(const char* json_text, chatpeg_response_template** out,
                                          chatpeg_error* err) {
  return guarded(err, [&] {
    require(json_text, "json_text");
    require(out, "out");
    const json j =
        chatpeg::api::detail::take(chatpeg::json::parse(json_text, {.file = "json_text"}));
    *out = new chatpeg_response_template{chatpeg::api::response_template::from_json(j)};
  });
}

void chatpeg_response_template_free(chatpeg_response_template* t) {
  delete t;
}

int chatpeg_response_template_parse(const chatpeg_response_template* t, const char* options_json,
                                    const char* output, size_t len, int message, char** result_json,
                                    chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "response_template");
    require(result_json, "result_json");
    const std::string_view text = bytes_of(output, len);
    const auto options = response_options_of(options_json);
    const json out =
        message != 0 ? t->value.parse_message(text, options) : t->value.parse(text, options);
    *result_json = copy_string(chatpeg::json::dump(out));
  });
}

int chatpeg_response_template_stream_new(const chatpeg_response_template* t,
                                         const char* options_json, chatpeg_stream** out,
                                         chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "response_template");
    require(out, "out");
    *out = new chatpeg_stream{t->value.stream(response_options_of(options_json))};
  });
}

int chatpeg_write_response_template(const chatpeg_template* t, char** template_json,
                                    chatpeg_error* err) {
  return guarded(err, [&] {
    require(t, "template");
    require(template_json, "template_json");
    *template_json = copy_string(chatpeg::json::dump(t->value.write_response_template()));
  });
}

void chatpeg_free(void* p) {
  std::free(p);
}

void chatpeg_error_clear(chatpeg_error* err) {
  if (err == nullptr) return;
  std::free(err->message);
  std::free(err->where);
  err->code = CHATPEG_OK;
  err->message = nullptr;
  err->where = nullptr;
}

}  // extern "C"
