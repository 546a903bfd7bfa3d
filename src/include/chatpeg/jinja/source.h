// Where chat templates come from: a .jinja file, a Hugging Face tokenizer_config.json
// (chat_template as a string or a list of named variants; bos/eos tokens as strings or
// added-token records) or a GGUF file's metadata (tokenizer.chat_template[.<name>], bos/eos
// through tokenizer.ggml.*_token_id into tokenizer.ggml.tokens). GGUF files are untrusted:
// only the metadata header is read, with every length bounded by the file size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"

namespace chatpeg::jinja {

enum class source_kind : std::uint8_t { automatic, jinja_file, tokenizer_config, gguf };

struct load_options {
  std::string name;                           // template variant; empty means "default"
  source_kind kind = source_kind::automatic;  // automatic: by GGUF magic, then .json extension
  std::size_t max_template_bytes = 4u << 20;
  std::size_t max_config_bytes = 64u << 20;
  std::uint64_t max_gguf_entries = 1u << 20;  // metadata key/value pairs and array elements
};

struct template_source {
  std::string source;                 // the template text
  std::string name;                   // the variant that was chosen ("default", ...)
  std::vector<std::string> variants;  // every variant the file offers
  json::value special_tokens = json::value::object();  // {"bos_token": ..., "eos_token": ...}
  // The Hugging Face response template shipped beside it, as JSON text: tokenizer_config's
  // "response_template" (an older "response_schema" as {"response_schema": ...}), GGUF's
  // tokenizer.response_template. Empty when there is none.
  std::string response_template;
};

base::result<template_source> load_template_source(const std::string& path,
                                                   const load_options& options = {});

// What load_template_source takes a file for when its kind is automatic: gguf by the magic
// bytes, tokenizer_config by a .json name, else jinja_file. errc::io_error when it cannot be
// opened.
base::result<source_kind> source_kind_of(const std::string& path);

// The same from a parsed tokenizer_config.json.
base::result<template_source> template_from_tokenizer_config(const json::value& config,
                                                             const load_options& options = {});

// The same from the bytes of a GGUF file (at least its metadata header).
base::result<template_source> template_from_gguf(std::string_view bytes,
                                                 const load_options& options = {});

}  // namespace chatpeg::jinja
