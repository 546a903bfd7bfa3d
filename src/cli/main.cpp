// Entry point of the `chatpeg` command: sets up CLI11 subcommands (README.md, "The command") and
// maps results to the exit codes of the contract (0 ok, 1 input failed, 2 usage error).
#include <CLI/CLI.hpp>

#include "chatpeg/version.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"chatpeg: chat templates to prompts, grammars and parsers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "chatpeg " CHATPEG_VERSION_STRING);
  chatpeg::cli::register_analyze(app);
  chatpeg::cli::register_render(app);
  chatpeg::cli::register_parse(app);
  chatpeg::cli::register_grammar(app);
  chatpeg::cli::register_serve(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "chatpeg: " << e.what() << " (command line)\n";
    return chatpeg::cli::exit_usage;
  }
  return chatpeg::cli::exit_code();
}
