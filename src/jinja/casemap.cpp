// Lookups in the generated case tables (casemap_data.cpp): binary search over runs of
// single-code-point mappings, then the short list of one-to-many mappings.
#include "jinja/casemap.h"

#include <algorithm>

namespace chatpeg::jinja::detail {
namespace {

struct table {
  const case_run* runs;
  std::size_t runs_size;
  const case_special* special;
  std::size_t special_size;
};

const table& table_of(case_kind k) {
  using namespace casemap_data;
  static const table tables[] = {
      {upper_runs, upper_runs_size, upper_special, upper_special_size},
      {lower_runs, lower_runs_size, lower_special, lower_special_size},
      {title_runs, title_runs_size, title_special, title_special_size},
      {fold_runs, fold_runs_size, fold_special, fold_special_size},
  };
  return tables[static_cast<int>(k)];
}

}  // namespace

void append_case(std::vector<char32_t>& out, char32_t c, case_kind k) {
  const table& t = table_of(k);
  const case_special* se = t.special + t.special_size;
  const case_special* s = std::lower_bound(
      t.special, se, c, [](const case_special& e, char32_t x) { return e.cp < x; });
  if (s != se && s->cp == c) {
    for (char32_t m : s->to)
      if (m) out.push_back(m);
    return;
  }
  const case_run* re = t.runs + t.runs_size;
  const case_run* r =
      std::upper_bound(t.runs, re, c, [](char32_t x, const case_run& e) { return x < e.first; });
  if (r != t.runs) {
    --r;
    if (c <= r->last && (c - r->first) % r->stride == 0) {
      out.push_back(static_cast<char32_t>(static_cast<std::int64_t>(c) + r->delta));
      return;
    }
  }
  out.push_back(c);
}

unsigned case_props(char32_t c) {
  using namespace casemap_data;
  const prop_range* e = props + props_size;
  const prop_range* r =
      std::upper_bound(props, e, c, [](char32_t x, const prop_range& p) { return x < p.first; });
  return r == props ? 0 : (r - 1)->bits;
}

}  // namespace chatpeg::jinja::detail
