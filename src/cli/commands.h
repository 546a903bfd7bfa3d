// Subcommand registration for the chatpeg CLI. Each command file registers its
// subcommand and records its exit code through set_exit_code().
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "chatpeg/base/error.h"

namespace chatpeg::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;  // input understood but failed
inline constexpr int exit_usage = 2;   // bad flags, unreadable file, invalid JSON

void register_grammar(CLI::App& app);
void register_render(CLI::App& app);
void register_analyze(CLI::App& app);
void register_parse(CLI::App& app);
void register_serve(CLI::App& app);

int exit_code();
void set_exit_code(int code);

// Prints "chatpeg: <what> (<where>)" to stderr and returns the exit code for the error.
int report(const base::error& e);
int report(std::string_view what, std::string_view where);

}  // namespace chatpeg::cli
