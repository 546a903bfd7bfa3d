// Shared options of the commands that take a chat template (README.md, "The command"):
// --template, --template-name, --bos, --eos, --analysis; plus JSON file reading with the
// contract's exit codes (unreadable or invalid JSON → usage error, exit 2).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"

namespace chatpeg::cli {

struct template_args {
  std::string path;
  std::string name;
  std::optional<std::string> bos;
  std::optional<std::string> eos;
  std::string analysis;  // --analysis FILE (not on every command)
};

struct template_option_flags {
  bool with_analysis = false;  // offer --analysis FILE
  bool required = true;        // --template must be given
};
void add_template_options(CLI::App* sub, template_args& args, template_option_flags flags);

// Loads and compiles the template. On failure reports the error and returns the exit code
// through `code`.
std::shared_ptr<const chat::chat_template> load_chat_template(const template_args& args, int& code);

// Reads a JSON file; on failure reports it (exit 2) and returns nullopt.
std::optional<json::value> read_json_file(const std::string& path, int& code);

// Reads all of stdin.
std::string read_stdin();

}  // namespace chatpeg::cli
