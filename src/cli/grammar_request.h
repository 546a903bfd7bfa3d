// The request mode of `chatpeg grammar` (see grammar_request.cpp).
#pragma once

#include <string>

#include "cli/template_loader.h"

namespace chatpeg::cli {

int run_grammar_request(const template_args& tmpl_args, const std::string& request_path,
                        bool as_json);

}  // namespace chatpeg::cli
