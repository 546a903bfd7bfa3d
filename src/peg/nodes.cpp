// Display names of the node kinds, used by grammar dumps, validation messages and errors.
#include "chatpeg/peg/nodes.h"

#include <type_traits>

namespace chatpeg::peg {

std::string_view node_kind_name(const node& n) {
  return std::visit(
      [](const auto& v) -> std::string_view {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::epsilon>)
          return "epsilon";
        else if constexpr (std::is_same_v<T, nodes::start>)
          return "start";
        else if constexpr (std::is_same_v<T, nodes::end>)
          return "end";
        else if constexpr (std::is_same_v<T, nodes::literal>)
          return "literal";
        else if constexpr (std::is_same_v<T, nodes::sequence>)
          return "sequence";
        else if constexpr (std::is_same_v<T, nodes::choice>)
          return "choice";
        else if constexpr (std::is_same_v<T, nodes::repetition>)
          return "repetition";
        else if constexpr (std::is_same_v<T, nodes::peek>)
          return "peek";
        else if constexpr (std::is_same_v<T, nodes::negate>)
          return "negate";
        else if constexpr (std::is_same_v<T, nodes::any>)
          return "any";
        else if constexpr (std::is_same_v<T, nodes::space>)
          return "space";
        else if constexpr (std::is_same_v<T, nodes::char_class>)
          return "char_class";
        else if constexpr (std::is_same_v<T, nodes::until>)
          return "until";
        else if constexpr (std::is_same_v<T, nodes::atomic>)
          return "atomic";
        else if constexpr (std::is_same_v<T, nodes::tagged>)
          return "tagged";
        else if constexpr (std::is_same_v<T, nodes::rule>)
          return "rule";
        else if constexpr (std::is_same_v<T, nodes::ref>)
          return "ref";
        else if constexpr (std::is_same_v<T, nodes::schema>)
          return "schema";
        else
          return "gbnf";
      },
      n);
}

}  // namespace chatpeg::peg
