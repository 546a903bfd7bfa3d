// stream::mapper: the one-shot AST → message fold. The fold itself lives in
// fold.cpp, shared with the streaming session, which folds a growing AST incrementally; the
// mapper folds one whole AST and keeps the fold's buffers between calls.
#include "stream/mapper.h"

#include "stream/fold.h"

namespace chatpeg::stream {

struct mapper::state {
  detail::fold f;
};

mapper::mapper() : state_(std::make_unique<state>()) {}
mapper::~mapper() = default;
mapper::mapper(mapper&&) noexcept = default;
mapper& mapper::operator=(mapper&&) noexcept = default;

base::result<chat::message> mapper::map(const peg::grammar& g, const peg::match_result& m,
                                        std::string_view input, const map_options& options) {
  (void)g;  // built-in tags need no grammar lookups; user tags are ignored
  if (!state_) state_ = std::make_unique<state>();
  return state_->f.map(m.ast, input, options);
}

base::result<chat::message> map_ast(const peg::grammar& g, const peg::match_result& m,
                                    std::string_view input, const map_options& options) {
  mapper mp;
  return mp.map(g, m, input, options);
}

}  // namespace chatpeg::stream
