// Reading an OpenAI chat request file and preparing it against a template — shared by
// `parse` and `grammar --template`. Errors are reported with the contract's exit codes.
#pragma once

#include <optional>
#include <string>

#include "chatpeg/chat/prepare.h"

namespace chatpeg::cli {

std::optional<chat::request> load_request(const std::string& path, int& code);

std::optional<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                              const chat::request& req, bool build_gbnf, int& code);

}  // namespace chatpeg::cli
