// Template source → immutable program (lexer + parser).
#pragma once

#include <memory>
#include <string_view>

#include "chatpeg/jinja/jinja.h"

namespace chatpeg::jinja::detail {

base::result<std::shared_ptr<const program>> parse_program(std::string_view source,
                                                           const parse_options& options);

}  // namespace chatpeg::jinja::detail
