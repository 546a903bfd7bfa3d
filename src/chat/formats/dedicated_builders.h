// Declarations of the dedicated parser builders that live in their own files
// (dedicated_<format>.cpp); dedicated_parsers.cpp keys them by analysis.handler. Each builder
// emits only the tags of the contract in peg/tags.h, so stream::mapper needs no per-model code.
#pragma once

#include "chat/parser_gen/parser_gen_internal.h"

namespace chatpeg::chat::detail {

base::result<gen_result> build_gpt_oss(gen_context& c);  // harmony channels and recipients
base::result<gen_result> build_gemma_4(gen_context& c);  // call:NAME{key:<|"|>v<|"|>}
base::result<gen_result> build_kimi_k2(gen_context& c);  // functions.NAME:IDX sections
base::result<gen_result> build_cohere(gen_context& c);   // START_THINKING/TEXT/ACTION blocks

}  // namespace chatpeg::chat::detail
