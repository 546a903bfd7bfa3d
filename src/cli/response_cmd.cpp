// Response templates on the command line: loading one (from its own file or from the chat
// template file that ships it), choosing between it and chatpeg's own parser, parsing stdin
// with it (OpenAI message, the raw dict, deltas or raw events), and writing one for a chat
// template. A template that does not validate is a usage error (exit 2) naming its JSON path.
#include "cli/response_cmd.h"

#include <iostream>
#include <map>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/jinja/source.h"
#include "cli/commands.h"
#include "cli/parse_output.h"

namespace chatpeg::cli {
namespace {

const std::map<std::string, output_format> kFormats = {
    {"auto", output_format::automatic},
    {"template", output_format::chat_template},
    {"response-template", output_format::response_template},
};

// Reports a response template error as a usage error, naming the file.
int report_template_error(base::error e, const std::string& file) {
  if (e.where.file.empty()) e.where.file = file;
  report(e);
  return exit_usage;
}

// --stream --raw: the parser's events, one per line, then {"message": dict}.
int stream_events(const response::template_ptr& t, const response::parse_options& options,
                  std::string_view output, std::size_t chunk) {
  response::parser p(t, options);
  for (const auto& e : p.initial_events()) print_line(e.to_json());
  int code = feed_in_chunks(output, chunk, [&p](std::string_view piece) {
    auto events = p.feed(piece);
    if (!events) return fail_on_output(std::move(events).error());
    for (const auto& e : *events) print_line(e.to_json());
    return exit_ok;
  });
  if (code != exit_ok) return code;
  auto done = p.finalize();
  if (!done) return fail_on_output(std::move(done).error());
  for (const auto& e : done->events) print_line(e.to_json());
  print_line(json::value::object({{"message", done->message}}));
  return exit_ok;
}

// --stream: OpenAI deltas as `parse --stream` prints them, then the finish line.
int stream_deltas(const response::template_ptr& t, const response::parse_options& options,
                  std::string_view output, std::size_t chunk) {
  response::delta_stream s(t, options);
  return print_stream(s, output, chunk);
}

// --partial: the output is a prefix of a response still streaming. What a delta_stream has
// sent for it is the message so far: text up to the bytes that may still become a delimiter,
// calls whose regions have closed.
int print_partial(const response::template_ptr& t, const response::parse_options& options,
                  std::string_view output) {
  response::delta_stream s(t, options);
  auto deltas = s.feed(output);
  if (!deltas) return fail_on_output(std::move(deltas).error());
  print_message(s.current());
  return exit_ok;
}

}  // namespace

void add_output_format_option(CLI::App* sub, output_format& format, const std::string& help) {
  sub->add_option("--output-format", format, help)
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
}

void add_response_parse_options(CLI::App* sub, response_args& args) {
  sub->add_option("--response-template", args.path,
                  "parse with this Hugging Face response template (the object, or a "
                  "tokenizer_config.json holding one); no chat template needed");
  sub->add_option("--prefix-file", args.prefix_file,
                  "the rendered prompt the output continues (response templates; default: "
                  "the prompt rendered from --template and --request, else empty)");
  sub->add_flag("--raw", args.raw,
                "response templates: print the dict as transformers' parse_response returns "
                "it (with --stream: one region event per line)");
  add_output_format_option(sub, args.format,
                           "parser: auto (the response template when --response-template is "
                           "given, else chatpeg's analysis), template, response-template "
                           "(--response-template or the one the --template file ships)");
}

response::template_ptr load_response_template(const std::string& path, int& code) {
  auto text = base::read_file(path);
  if (!text) {
    code = report_template_error(std::move(text).error(), path);
    return nullptr;
  }
  auto t = response::response_template::from_text(*text);
  if (!t) {
    code = report_template_error(std::move(t).error(), path);
    return nullptr;
  }
  return std::move(*t);
}

response::template_ptr load_shipped_response_template(const template_args& tmpl, int& code) {
  auto src = jinja::load_template_source(tmpl.path, {.name = tmpl.name});
  if (!src) {
    code = report_template_error(std::move(src).error(), tmpl.path);
    return nullptr;
  }
  if (src->response_template.empty()) {
    code = report_template_error(
        base::make_error(base::errc::invalid_argument,
                         "--output-format response-template: the template file ships no "
                         "response_template; give one with --response-template"),
        tmpl.path);
    return nullptr;
  }
  auto t = response::response_template::from_text(src->response_template);
  if (!t) {
    code = report_template_error(std::move(t).error(), tmpl.path);
    return nullptr;
  }
  return std::move(*t);
}

response::template_ptr choose_response_template(const response_args& args,
                                                const template_args& tmpl, int& code) {
  const bool have_rt = !args.path.empty();
  const bool have_tmpl = !tmpl.path.empty();
  auto usage = [&code](std::string_view what) {
    code = report(base::make_error(base::errc::invalid_argument, std::string(what)));
    return nullptr;
  };
  switch (args.format) {
    case output_format::chat_template:
      if (!have_tmpl) return usage("--output-format template needs --template");
      if (have_rt) return usage("--output-format template contradicts --response-template");
      return nullptr;
    case output_format::response_template:
      if (have_rt) return load_response_template(args.path, code);
      if (!have_tmpl) {
        return usage("--output-format response-template needs --response-template or --template");
      }
      return load_shipped_response_template(tmpl, code);
    case output_format::automatic:
      if (have_rt) return load_response_template(args.path, code);
      if (!have_tmpl) return usage("give --template or --response-template");
      return nullptr;
  }
  return nullptr;
}

int run_response_parse(const response::template_ptr& t, const response::parse_options& options,
                       const std::string& output, const response_parse_mode& mode) {
  const bool raw = mode.raw, stream = mode.stream;
  const std::size_t chunk = mode.chunk;
  if (mode.partial) return print_partial(t, options, output);
  if (stream) {
    return raw ? stream_events(t, options, output, chunk)
               : stream_deltas(t, options, output, chunk);
  }
  auto dict = response::parse(*t, output, options);
  if (!dict) return fail_on_output(std::move(dict).error());
  if (raw) {
    print_line(*dict);
    return exit_ok;
  }
  auto msg = response::to_message(*dict);
  if (!msg) return fail_on_output(std::move(msg).error());
  print_message(std::move(*msg));
  return exit_ok;
}

int run_write_response_template(const chat::chat_template& tmpl) {
  auto written = response::write_template(tmpl);
  if (!written) {
    // A format v1 cannot express is the usage error the README documents; a template that
    // fails to render its one-message probe reports as any render failure does.
    const int code = report(written.error());
    return written.error().code == base::errc::unsupported ? exit_usage : code;
  }
  std::cout << written->dump(2, ' ', false, json::value::error_handler_t::replace) << '\n';
  return exit_ok;
}

int run_cross_check(const chat::chat_template& tmpl, const response::template_ptr& rt) {
  const auto report = response::cross_check(tmpl, *rt);
  std::cout << report.to_json().dump(2, ' ', false, json::value::error_handler_t::replace) << '\n';
  return report.agreeing() == report.probes.size() ? exit_ok : exit_failed;
}

void print_shipped_check(const chat::chat_template& tmpl, const template_args& files) {
  auto src = jinja::load_template_source(files.path, {.name = files.name});
  if (!src || src->response_template.empty()) return;
  auto rt = response::response_template::from_text(src->response_template);
  std::cout << "\nresponse template (shipped with the model):\n";
  if (!rt) {
    std::cout << "  does not load: " << rt.error().to_string() << '\n';
    return;
  }
  const auto report = response::cross_check(tmpl, **rt);
  std::cout << "  " << report.agreeing() << " of " << report.probes.size()
            << " probe outputs read the same by chatpeg and the response template\n";
  for (const auto& p : report.probes) {
    if (p.agree) continue;
    std::cout << "  disagree on " << p.probe << " " << json::quote(p.output) << ":\n"
              << "    chatpeg:           " << json::dump(p.own) << "\n"
              << "    response template: " << json::dump(p.response_template) << '\n';
  }
  for (const auto& [name, why] : report.skipped) {
    std::cout << "  skipped " << name << ": " << why << '\n';
  }
}

}  // namespace chatpeg::cli
