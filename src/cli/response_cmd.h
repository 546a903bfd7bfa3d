// The CLI's side of Hugging Face response templates (README.md, "Response templates"):
// `parse --response-template RT.json` parses stdin with a response template alone (or with
// the one a chat template file ships, --output-format response-template), and
// `analyze --response-template` writes one for a chat template from chatpeg's analysis.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/response/response.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {

// Which parser `parse` uses: auto = the response template when --response-template is given
// (--template and --request then only render the prefix), else chatpeg's own analysis.
enum class output_format { automatic, chat_template, response_template };

struct response_args {
  std::string path;         // --response-template RT.json (template object or tokenizer_config)
  std::string prefix_file;  // --prefix-file: the rendered prompt
  bool raw = false;         // --raw: the dict as parse_response returns it / events
  output_format format = output_format::automatic;
};

// Adds --output-format auto|template|response-template (case-insensitive) with `help`.
void add_output_format_option(CLI::App* sub, output_format& format, const std::string& help);

// Adds --response-template, --prefix-file, --raw and --output-format to `parse`.
void add_response_parse_options(CLI::App* sub, response_args& args);

// Loads RT.json (a template object or a tokenizer_config.json holding one). A file that does
// not validate is reported with its JSON path and exits 2 (through `code`).
response::template_ptr load_response_template(const std::string& path, int& code);
// The response template a chat template file ships (tokenizer_config "response_template",
// GGUF tokenizer.response_template); reported (exit 2) when it has none or it does not
// validate.
response::template_ptr load_shipped_response_template(const template_args& tmpl, int& code);

// The response template `parse` uses for these flags: null when chatpeg's own
// parser is chosen (auto with a chat template, or template). `code` is set on failure.
response::template_ptr choose_response_template(const response_args& args,
                                                const template_args& tmpl, int& code);

struct response_parse_mode {
  bool raw = false;     // the dict (or, streaming, the parser's events), not OpenAI's shape
  bool stream = false;  // print what each chunk of `chunk` bytes adds
  std::size_t chunk = 4;
  bool partial = false;  // the output is a prefix: the message so far (not with raw/stream)
};

// Parses `output` with `t`: the OpenAI message, or with `raw` the dict; with `stream`, chunks
// of `chunk` bytes print deltas (or, raw, events) one JSON line each, then the final line;
// with `partial`, the message parsed so far from a prefix of the output.
int run_response_parse(const response::template_ptr& t, const response::parse_options& options,
                       const std::string& output, const response_parse_mode& mode);

// `analyze --response-template`: prints the written response template (pretty JSON), or
// reports why the format cannot be expressed (exit 2).
int run_write_response_template(const chat::chat_template& tmpl);

// `analyze --check-response-template RT.json`: the cross-check report as JSON; exit 1 when a
// probe output is read differently.
int run_cross_check(const chat::chat_template& tmpl, const response::template_ptr& rt);
// After `analyze`'s summary: how the response template the template file ships (if any) agrees
// with the analysis on the template's own probe outputs, each disagreement with both readings.
void print_shipped_check(const chat::chat_template& tmpl, const template_args& files);

}  // namespace chatpeg::cli
