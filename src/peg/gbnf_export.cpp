// GBNF export of a PEG grammar (placeholder until the exporter lands).
#include "chatpeg/peg/gbnf_export.h"

namespace chatpeg::peg {

base::result<std::string> export_gbnf(const grammar&, const gbnf_options&) {
  return base::make_error(base::errc::unsupported, "GBNF export not implemented yet");
}

}  // namespace chatpeg::peg
