// A peg::grammar to JSON and back, node for node: reloading gives a grammar that behaves
// the same (same matches, same GBNF). Lives in grammar because peg must not depend on json.
#pragma once

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::grammar {

json::value to_json(const peg::grammar& g);
base::result<peg::grammar> from_json(const json::value& j);  // errors carry the JSON path

}  // namespace chatpeg::grammar
