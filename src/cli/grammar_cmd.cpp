// `chatpeg grammar`: grammar-related modes. `--check G.gbnf [--input FILE]` reads a GBNF
// grammar (syntax errors, and what llama.cpp's loader would refuse, with the rule and
// line:column; a warning on stderr for what it loads but its sampler can loop on, exit 0) and,
// with --input, says whether the grammar accepts the whole file (exit 0) or where it stopped
// (exit 1). The request mode
// (`--template T --request R`, the GBNF for a chat request) is another mode of the same
// subcommand; run_grammar() dispatches on the options given.
#include <iostream>
#include <memory>
#include <string>

#include "chatpeg/base/file.h"
#include "chatpeg/grammar/gbnf.h"
#include "cli/commands.h"
#include "cli/grammar_request.h"

namespace chatpeg::cli {
namespace {

struct grammar_args {
  std::string check;   // --check: GBNF file to read
  std::string input;   // --input: text the grammar must accept
  template_args tmpl;  // --template ... --request: the grammar of a chat request
  std::string request;
  bool json = false;
};

// Reads a file; an unreadable file is a usage error (exit 2).
bool read_or_report(const std::string& path, std::string& out) {
  auto text = base::read_file(path);
  if (!text) {
    report(text.error());
    set_exit_code(exit_usage);
    return false;
  }
  out = std::move(*text);
  return true;
}

int run_check(const grammar_args& args) {
  std::string source;
  if (!read_or_report(args.check, source)) return exit_usage;
  auto g = grammar::parse_gbnf(source);
  if (!g) {
    base::error e = std::move(g).error();
    e.where.file = args.check;
    report(e);
    return exit_failed;  // the grammar was read but is not valid GBNF
  }
  // What llama.cpp loads but may not sample: a warning, the check still passes.
  for (const auto& w : grammar::gbnf_warnings(**g)) {
    base::location where = w.where;
    where.file = args.check;
    std::cerr << "chatpeg: warning: " << w.message << " (" << where.to_string() << ")\n";
  }
  if (args.input.empty()) {
    std::cout << "ok: " << grammar::gbnf_rule_count(**g) << " rules\n";
    return exit_ok;
  }
  std::string input;
  if (!read_or_report(args.input, input)) return exit_usage;
  auto r = grammar::recognize(**g, input);
  if (!r) {
    base::error e = std::move(r).error();
    e.where.file = args.input;
    base::fill_line_column(e.where, input);
    report(e);
    return exit_failed;
  }
  if (!r->accepted) {
    base::location where;
    where.file = args.input;
    where.offset = r->fail_offset;
    base::fill_line_column(where, input);
    report(base::make_error(base::errc::no_match, "input rejected", std::move(where), r->expected));
    return exit_failed;
  }
  std::cout << "accepted: " << input.size() << " bytes\n";
  return exit_ok;
}

int run_grammar(const grammar_args& args) {
  if (!args.check.empty() && !args.tmpl.path.empty()) {
    report("grammar: give either --check or --template/--request", "command line");
    return exit_usage;
  }
  if (!args.check.empty()) return run_check(args);
  if (!args.tmpl.path.empty() || !args.request.empty()) {
    if (args.tmpl.path.empty() || args.request.empty()) {
      report("grammar: --template and --request go together", "command line");
      return exit_usage;
    }
    return run_grammar_request(args.tmpl, args.request, args.json);
  }
  report(args.input.empty() ? "grammar: give --check GRAMMAR.gbnf"
                            : "grammar: --input needs --check GRAMMAR.gbnf",
         "command line");
  return exit_usage;
}

}  // namespace

void register_grammar(CLI::App& app) {
  auto args = std::make_shared<grammar_args>();
  CLI::App* sub = app.add_subcommand(
      "grammar", "GBNF grammars: of a chat request, or check a grammar and an input");
  sub->add_option("--check", args->check,
                  "GBNF grammar file to check (syntax and llama.cpp's loader rules)");
  sub->add_option("--input", args->input,
                  "with --check: file whose whole text the grammar must accept");
  add_template_options(sub, args->tmpl, {.with_analysis = true, .required = false});
  sub->add_option("--request", args->request, "with --template: OpenAI chat request JSON");
  sub->add_flag("--json", args->json,
                "with --request: print gbnf, lazy, triggers, preserved_tokens, stops, "
                "generation_prompt as JSON");
  sub->callback([args] { set_exit_code(run_grammar(*args)); });
}

}  // namespace chatpeg::cli
