// Runs the built `chatpeg` binary on temporary files and checks stdout, stderr and exit
// codes against the CLI contract (CLI.md): 0 ok, 1 input understood but failed, 2 usage
// error; errors are one stderr line "chatpeg: <what> (<where>)".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct run_result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

class cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chatpeg_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  // Runs the CLI with `args` (stdin from the file `in` when given) through the shell.
  run_result run(const std::vector<std::string>& args, const std::string& in = {}) {
    std::string cmd = quote(CHATPEG_CLI_PATH);
    for (const auto& a : args) cmd += " " + quote(a);
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    if (!in.empty()) cmd += " <" + quote(in);
    cmd += " >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(cmd.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path dir_;
};

const char* const tool_grammar = R"(root ::= "<tool_call>" ws obj ws "</tool_call>"
obj ::= "{" ws "\"name\"" ws ":" ws str ws "}"
str ::= "\"" [a-z_]+ "\""
ws ::= [ \n]*
)";

bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

TEST_F(cli, grammar_ok) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ok: 4 rules\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(cli, grammar_syntax_error_has_line_column) {
  const auto g = write("bad.gbnf", "root ::= x\nx ::= \"a\" | (\"b\"\n");
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("chatpeg: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("bad.gbnf:3:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
}

TEST_F(cli, undefined_rule_is_reported_where_used) {
  const auto g = write("undef.gbnf", "root ::= \"a\" missing\n");
  const auto r = run({"grammar", "--check", g});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("undefined rule 'missing'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("undef.gbnf:1:14"), std::string::npos) << r.err;
}

// What llama.cpp's loader refuses, --check refuses too, naming the rule and where.
TEST_F(cli, grammar_loader_rules) {
  struct row {
    const char* text;
    const char* where;
    const char* what;
  };
  for (const row& w : {
           row{"root ::= \"{\" item \"}\"\nitem ::= \"k\" ( \",\" [ \\t]{0,16} \"k\" ){0,200}\n",
               "loader.gbnf:2:37",
               "rule 'item': repetition {0,200} of an element that stands for 17"},
           row{"root ::= \"a\"{0,5000}\n", "loader.gbnf:1:13", "above 2000"},
           row{"root ::= x\nx ::= x \"a\" | \"b\"\n", "loader.gbnf:2:1",
               "left recursion: rule 'x'"},
           row{"root ::= [] \"a\"+ []*\n", "loader.gbnf:1:20", "after an empty literal or class"},
       }) {
    const auto g = write("loader.gbnf", w.text);
    const auto r = run({"grammar", "--check", g});
    EXPECT_EQ(r.code, 1) << w.text;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(w.where), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(w.what), std::string::npos) << r.err;
  }
}

// What llama.cpp loads, --check accepts: a repetition of a nullable sequence (the shape
// llama.cpp's schema converter writes) silently; a grammar whose sampler can loop with one
// warning line on stderr, exit 0.
TEST_F(cli, grammar_check_accepts_what_llama_loads) {
  const auto ok =
      write("nullable.gbnf", "root ::= (call? ws)+\ncall ::= \"c\"\nws ::= [ \\t\\n]*\n");
  const auto r = run({"grammar", "--check", ok});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ok: 3 rules\n");
  EXPECT_EQ(r.err, "");
  const auto loop =
      write("loop.gbnf", "root ::= x\nx ::= n x \"a\" | \"b\"\nn ::= m\nm ::= \"\" | \"c\"\n");
  const auto w = run({"grammar", "--check", loop});
  EXPECT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(w.out, "ok: 4 rules\n");
  EXPECT_TRUE(one_line(w.err)) << w.err;
  EXPECT_EQ(w.err.rfind("chatpeg: warning: rule 'x'", 0), 0u) << w.err;
  EXPECT_NE(w.err.find("loop.gbnf:2:1"), std::string::npos) << w.err;
}

TEST_F(cli, input_accepted) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>\n{\"name\": \"get_weather\"}\n</tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "accepted: 48 bytes\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(cli, input_rejected_with_byte_offset) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>\n{\"name\": \"Get\"}\n</tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("chatpeg: input rejected (", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("in.txt:2:11, byte 22"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected [_a-z]"), std::string::npos) << r.err;
}

TEST_F(cli, input_ends_early) {
  const auto g = write("g.gbnf", tool_grammar);
  const auto in = write("in.txt", "<tool_call>");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("byte 11"), std::string::npos) << r.err;
}

TEST_F(cli, input_invalid_utf8) {
  const auto g = write("g.gbnf", "root ::= .*\n");
  const auto in = write("in.txt", "ab\xFF");
  const auto r = run({"grammar", "--check", g, "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte 2"), std::string::npos) << r.err;
}

TEST_F(cli, missing_files_are_usage_errors) {
  const auto g = write("g.gbnf", tool_grammar);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"grammar", "--check", (dir_ / "nope.gbnf").string()},
           {"grammar", "--check", g, "--input", (dir_ / "nope.txt").string()}}) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("nope."), std::string::npos) << r.err;
  }
}

TEST_F(cli, bad_flags_are_usage_errors) {
  const auto g = write("g.gbnf", tool_grammar);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"grammar", "--check", g, "--bogus"},
                                             {"grammar"},
                                             {"grammar", "--input", g},
                                             {"grammar", "--check"},
                                             {"no-such-command"},
                                             {}}) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << (args.empty() ? "" : args.back());
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.rfind("chatpeg: ", 0), 0u) << r.err;
  }
}

TEST_F(cli, bundled_example_is_accepted) {
  const fs::path root = CHATPEG_SOURCE_DIR;
  const auto r = run({"grammar", "--check", (root / "examples/tool_call.gbnf").string(), "--input",
                      (root / "examples/tool_call.txt").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("accepted: ", 0), 0u) << r.out;
}

// analyze names the format description that reads a template, why it was needed, and the
// markers it bound from the template's renders (text and --json alike).
TEST_F(cli, analyze_names_the_format_description_and_its_markers) {
  const fs::path t =
      fs::path(CHATPEG_SOURCE_DIR) / "tests/conformance/invented/channels_channel_first.jinja";
  const auto text = run({"analyze", "--template", t.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("source: dedicated (handler gpt-oss)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("markers:\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    channel: \"[chan]\"\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("read by the format description 'gpt-oss': the function name sits"),
            std::string::npos)
      << text.out;
  const auto j = run({"analyze", "--template", t.string(), "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("\"constrain\":\"[ctype]\""), std::string::npos) << j.out;
}

// parse --stream / --partial over the bundled example template (examples/chatml_tools.jinja:
// tools in the system turn, calls as <tool_call> JSON, reasoning in <think>).
const std::string example_template =
    std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja";

const char* const write_request =
    R"({"messages":[{"role":"user","content":"Write the file."}],"tools":[{"type":"function",)"
    R"("function":{"name":"write","parameters":{"type":"object","properties":{"content":)"
    R"({"type":"string"}},"required":["content"]}}}]})";

const std::string write_output =
    "Sure.\n<tool_call>\n{\"name\": \"write\", \"arguments\": {\"content\": \"h\\u00e9llo\"}}\n"
    "</tool_call>";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Replaces every generated call id ("call_" + 24 alphanumerics) with "call_ID".
std::string without_ids(std::string text) {
  for (std::size_t at = text.find("\"call_"); at != std::string::npos;
       at = text.find("\"call_", at + 1)) {
    text.replace(at + 6, 24, "ID");
  }
  return text;
}

class cli_parse : public cli {
 protected:
  run_result parse(const std::vector<std::string>& flags, const std::string& output) {
    const auto& t = example_template;
    const auto r = write("request.json", write_request);
    const auto in = write("output.txt", output);
    std::vector<std::string> args = {"parse", "--template", t, "--request", r};
    args.insert(args.end(), flags.begin(), flags.end());
    return run(args, in);
  }
};

TEST_F(cli_parse, stream_whole_output_prints_deltas_then_the_final_line) {
  const auto r = parse({"--stream", "--chunk", "0"}, write_output);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> want = {
      R"({"content":"Sure.\n"})",
      R"({"tool_calls":[{"index":0,"id":"call_ID","type":"function","function":)"
      R"({"name":"write","arguments":""}}]})",
      R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\"h\\u00e9llo\"}"}}]})",
      R"({"finish_reason":"tool_calls","message":{"role":"assistant","content":"Sure.\n",)"
      R"("tool_calls":[{"id":"call_ID","type":"function","function":{"name":"write",)"
      R"("arguments":"{\"content\":\"h\\u00e9llo\"}"}}]}})",
  };
  EXPECT_EQ(lines_of(without_ids(r.out)), want);
}

TEST_F(cli_parse, stream_any_chunk_size_ends_with_the_same_message) {
  const auto whole = parse({"--stream", "--chunk", "0"}, write_output);
  ASSERT_EQ(whole.code, 0) << whole.err;
  const std::string final_line = lines_of(without_ids(whole.out)).back();
  for (const char* chunk : {"1", "3", "4", "64"}) {
    const auto r = parse({"--stream", "--chunk", chunk}, write_output);
    ASSERT_EQ(r.code, 0) << chunk << ": " << r.err;
    const auto lines = lines_of(without_ids(r.out));
    ASSERT_GE(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines.back(), final_line) << "chunk " << chunk;
    // Smaller chunks give more, smaller argument fragments: one header line, in order.
    std::size_t headers = 0, header_at = 0, first_args_at = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find("\"id\":\"call_ID\",\"type\":\"function\"") != std::string::npos &&
          lines[i].rfind("{\"tool_calls\"", 0) == 0) {
        ++headers;
        header_at = i;
      } else if (lines[i].rfind("{\"tool_calls\"", 0) == 0 && first_args_at == lines.size()) {
        first_args_at = i;
      }
    }
    EXPECT_EQ(headers, 1u) << r.out;
    EXPECT_LT(header_at, first_args_at) << r.out;
  }
  // The default chunk is 4 bytes.
  const auto by_default = parse({"--stream"}, write_output);
  const auto by_four = parse({"--stream", "--chunk", "4"}, write_output);
  EXPECT_EQ(lines_of(without_ids(by_default.out)), lines_of(without_ids(by_four.out)));
}

// Fuzz finding (stream_session): a model that stops while still thinking streamed reasoning,
// then the final parse read the unclosed block as content and the stream ended in a refused
// retraction (exit 1). The final message keeps it as reasoning, at every chunk size.
TEST_F(cli_parse, stream_ending_inside_reasoning_keeps_it_as_reasoning) {
  for (const char* chunk : {"1", "4", "0"}) {
    const auto r = parse({"--stream", "--chunk", chunk}, "<think>abc");
    ASSERT_EQ(r.code, 0) << chunk << ": " << r.err;
    EXPECT_EQ(lines_of(r.out).back(),
              R"({"finish_reason":"stop","message":{"role":"assistant","content":"",)"
              R"("reasoning_content":"abc"}})")
        << chunk;
  }
}

TEST_F(cli_parse, stream_mismatch_exits_1_with_the_byte_offset) {
  const auto r =
      parse({"--stream"}, "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"content\" 1}}");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("byte 54"), std::string::npos) << r.err;
}

TEST_F(cli_parse, stream_flag_combinations_are_usage_errors) {
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--stream", "--partial"}, {"--chunk", "3"}, {"--stream", "--chunk", "x"}}) {
    const auto r = parse(flags, write_output);
    EXPECT_EQ(r.code, 2) << flags.front();
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
  }
}

TEST_F(cli_parse, partial_shows_an_unfinished_call_with_its_arguments_so_far) {
  const auto r = parse({"--partial"}, write_output.substr(0, 63));
  ASSERT_EQ(r.code, 0) << r.err;
  // Every call carries a generated id ("call_" + 24 alphanumerics), as OpenAI sends them.
  const auto id_at = r.out.find(R"("id":"call_)");
  ASSERT_NE(id_at, std::string::npos) << r.out;
  std::string out = r.out;
  out.erase(id_at, std::string(R"("id":"call_)").size() + 24 + 2);  // the member and its comma
  EXPECT_EQ(out, R"({"role":"assistant","content":"Sure.\n","tool_calls":[{"type":"function",)"
                 R"("function":{"name":"write","arguments":"{\"content\":\"h"}}]})"
                 "\n");
  // Cut inside a marker: the marker is held back.
  const auto cut = parse({"--partial"}, "Sure.\n<tool_ca");
  ASSERT_EQ(cut.code, 0) << cut.err;
  EXPECT_EQ(cut.out, "{\"role\":\"assistant\",\"content\":\"Sure.\\n\"}\n");
}

// A response template with invented markers: reasoning in <think>, JSON calls in <call>,
// content the rest.
const char* const kCallTemplate = R"({"start_anchor": "<|a|>", "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>"},
    "tool_calls": {"open": "<call>", "close": "</call>", "repeats": true, "content": "json",
                   "transform": {"type": "function", "function": {
                   "name": "{content.name}", "arguments": "{content.arguments}"}}},
    "content": {}}})";

// Response templates: parse with one alone (message, raw dict, deltas, raw events), a template
// that does not validate (exit 2 with the JSON path), and analyze writing one that reads the
// same output back.
TEST_F(cli, ParseWithResponseTemplate) {
  const std::string rt = write("rt.json", kCallTemplate);
  const std::string out = write("out.txt",
                                "<think>hm</think>Hi.<call>{\"name\": \"f\", \"arguments\": "
                                "{\"x\": 1}}</call>");
  const auto msg = run({"parse", "--response-template", rt}, out);
  ASSERT_EQ(msg.code, 0) << msg.err;
  EXPECT_NE(msg.out.find("\"content\":\"Hi.\""), std::string::npos) << msg.out;
  EXPECT_NE(msg.out.find("\"reasoning_content\":\"hm\""), std::string::npos) << msg.out;
  EXPECT_NE(msg.out.find("\"arguments\":\"{\\\"x\\\":1}\""), std::string::npos) << msg.out;
  EXPECT_NE(msg.out.find("\"id\":\"call_"), std::string::npos) << msg.out;
  const auto raw = run({"parse", "--response-template", rt, "--raw"}, out);
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_NE(raw.out.find("\"arguments\":{\"x\":1}"), std::string::npos) << raw.out;
  const auto deltas = run({"parse", "--response-template", rt, "--stream", "--chunk", "1"}, out);
  ASSERT_EQ(deltas.code, 0) << deltas.err;
  EXPECT_NE(deltas.out.find("{\"content\":\"H\"}"), std::string::npos) << deltas.out;
  EXPECT_NE(deltas.out.find("\"finish_reason\":\"tool_calls\""), std::string::npos);
  const auto events =
      run({"parse", "--response-template", rt, "--stream", "--raw", "--chunk", "3"}, out);
  ASSERT_EQ(events.code, 0) << events.err;
  EXPECT_NE(events.out.find("{\"type\":\"region_open\",\"field\":\"reasoning_content\"}"),
            std::string::npos)
      << events.out;
  EXPECT_EQ(events.out.find("</think>"), std::string::npos) << "a delimiter inside a chunk";
  EXPECT_NE(events.out.rfind("{\"message\":{"), std::string::npos);

  const std::string bad = write("bad.json", R"({"start_anchor": "x", "fields": {
      "content": {"open": "a", "open_pattern": "b"}}})");
  const auto b = run({"parse", "--response-template", bad}, out);
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("$.fields.content.open_pattern"), std::string::npos) << b.err;
  const auto none = run({"parse"}, out);
  EXPECT_EQ(none.code, 2) << none.err;
}

// parse --partial with a response template: the message so far from a prefix of the output.
// Bytes that may still become a delimiter are held back; a call appears once its region
// closes (its arguments are parsed at the close).
TEST_F(cli, ParsePartialWithResponseTemplate) {
  const std::string rt = write("rt.json", kCallTemplate);
  struct prefix_case {
    const char* output;
    const char* message;  // the whole line printed
  };
  const prefix_case cases[] = {
      {"", R"({"role":"assistant"})"},
      {"<think>h", R"({"role":"assistant","reasoning_content":"h"})"},
      {"<think>hm</thi", R"({"role":"assistant","reasoning_content":"hm"})"},
      {"<think>hm</think>Hi.<ca",
       R"({"role":"assistant","content":"Hi.","reasoning_content":"hm"})"},
      {"<think>hm</think>Hi.<call>{\"name\": \"f\", \"argu",
       R"({"role":"assistant","content":"Hi.","reasoning_content":"hm"})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.output);
    const auto r = run({"parse", "--response-template", rt, "--partial"}, write("p.txt", c.output));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(c.message) + "\n");
  }
  const auto whole = run({"parse", "--response-template", rt, "--partial"},
                         write("w.txt",
                               "<think>hm</think>Hi.<call>{\"name\": \"f\", "
                               "\"arguments\": {\"x\": 1}}</call><ca"));
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find(R"("name":"f","arguments":"{\"x\":1}")"), std::string::npos)
      << whole.out;
  const auto raw =
      run({"parse", "--response-template", rt, "--partial", "--raw"}, write("r.txt", "<think>h"));
  EXPECT_EQ(raw.code, 2);
  EXPECT_NE(raw.err.find("--raw"), std::string::npos) << raw.err;
}

TEST_F(cli, AnalyzeWritesAResponseTemplateThatReadsBack) {
  const std::string tmpl = write("t.jinja",
                                 "{% for m in messages %}<|im_start|>{{ m.role }}\n"
                                 "{{ m.content }}<|im_end|>\n{% endfor %}"
                                 "{% if add_generation_prompt %}<|im_start|>assistant\n"
                                 "{% endif %}");
  const auto w = run({"analyze", "--template", tmpl, "--response-template"});
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("\"start_anchor\": \"<|im_start|>assistant\\n\""), std::string::npos)
      << w.out;
  const std::string rt = write("rt.json", w.out);
  const auto r = run({"parse", "--response-template", rt}, write("o.txt", "Hello there."));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"role\":\"assistant\",\"content\":\"Hello there.\"}\n");
}

// analyze cross-checks the response template a tokenizer_config.json ships against its own
// analysis (a section after the summary), and --check-response-template reports it as JSON,
// exit 1 when a probe output is read differently.
TEST_F(cli, AnalyzeCrossChecksTheShippedResponseTemplate) {
  const std::string chat =
      R"("chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }})"
      R"(<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n)"
      R"({% endif %}")";
  const std::string good = write("good.json", "{" + chat + R"(, "response_template": {
      "start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}}})");
  const std::string bad = write("bad.json", "{" + chat + R"(, "response_template": {
      "start_anchor": "<|im_start|>assistant\n", "fields": {"reasoning_content": {}}}})");

  const auto a = run({"analyze", "--template", good});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("response template (shipped with the model):\n  3 of 3 probe outputs"),
            std::string::npos)
      << a.out;
  const auto b = run({"analyze", "--template", bad});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.out.find("0 of 3 probe outputs"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("disagree on content \"It is sunny in Paris.\""), std::string::npos)
      << b.out;

  const auto ok = run({"analyze", "--template", good, "--check-response-template", good});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"probes\": 3,\n  \"agree\": 3,"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("\"why\": \"the template does not write tool calls\""), std::string::npos)
      << ok.out;
  const auto no = run({"analyze", "--template", good, "--check-response-template", bad});
  EXPECT_EQ(no.code, 1) << no.out;
  const auto missing = run({"analyze", "--template", good, "--check-response-template", "nope"});
  EXPECT_EQ(missing.code, 2);
}

// serve checks its response template before it listens: none shipped for
// --output-format response-template, or one that does not validate, is a usage error.
TEST_F(cli, ServeRejectsAMissingOrInvalidResponseTemplate) {
  const std::string tmpl = write("t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const auto none =
      run({"serve", "--template", tmpl, "--port", "0", "--output-format", "response-template"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("ships no response_template"), std::string::npos) << none.err;
  const std::string bad =
      write("bad.json", R"({"start_anchor": "<a>", "fields": {"content": {"open": 3}}})");
  const auto invalid =
      run({"serve", "--template", tmpl, "--port", "0", "--response-template", bad});
  EXPECT_EQ(invalid.code, 2);
  EXPECT_NE(invalid.err.find("$.fields.content.open"), std::string::npos) << invalid.err;
}

// The other ways in: the response template a tokenizer_config.json ships (chosen with
// --output-format), the prompt as --prefix-file (an output that continues an opened region),
// string arguments cast by --request's tool schemas, and --stream at every chunk size 1..7
// ending in the one-shot message.
TEST_F(cli, ResponseTemplateFromConfigPrefixCastingAndChunks) {
  const std::string config = write("tokenizer_config.json", R"({
      "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}",
      "response_template": {"start_anchor": "<|a|>", "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open_pattern": "<call name=\"(?P<name>\\w+)\">", "close": "</call>",
                       "repeats": true, "content": "kv-lines",
                       "transform": {"type": "function", "function": {
                         "name": "{name}", "arguments": "{content}"}}},
        "content": {}}}})");
  const std::string out = write("out.txt", "why</think>Ok.<call name=\"f\">n: 7\n</call>");
  const std::string prefix = write("prefix.txt", "<|u|>hi<|a|><think>");
  const std::string request = write("request.json", R"({"messages": [], "tools": [
      {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
        "properties": {"n": {"type": "integer"}}}}}]})");

  const auto none = run({"parse", "--template", config, "--output-format", "template"}, out);
  EXPECT_EQ(none.code, 2) << "template needs --request";
  const std::vector<std::string> base = {
      "parse",         "--template", config,      "--output-format", "response-template",
      "--prefix-file", prefix,       "--request", request,           "--raw"};
  const auto raw = run(base, out);
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_EQ(raw.out,  // keys in the order their regions closed, as transformers' dict has them
            "{\"reasoning_content\":\"why\",\"content\":\"Ok.\",\"tool_calls\":[{\"type\":"
            "\"function\",\"function\":{\"name\":\"f\",\"arguments\":{\"n\":7}}}]}\n");
  std::vector<std::string> streamed(base.begin(), base.end() - 1);  // without --raw
  streamed.insert(streamed.end(), {"--stream", "--chunk", ""});
  for (int chunk = 1; chunk <= 7; ++chunk) {
    streamed.back() = std::to_string(chunk);
    const auto r = run(streamed, out);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto last = r.out.rfind("{\"finish_reason\"");
    ASSERT_NE(last, std::string::npos) << r.out;
    const std::string final_line = r.out.substr(last);
    EXPECT_NE(final_line.find("\"content\":\"Ok.\",\"reasoning_content\":\"why\""),
              std::string::npos)
        << "chunk " << chunk << ": " << final_line;
    EXPECT_NE(final_line.find("\"arguments\":\"{\\\"n\\\":7}\""), std::string::npos)
        << "chunk " << chunk << ": " << final_line;
  }
  // A chat template file that ships none: exit 2, saying so.
  const std::string plain = write("plain.json", R"({"chat_template": "x"})");
  const auto missing =
      run({"parse", "--template", plain, "--output-format", "response-template"}, out);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("ships no response_template"), std::string::npos) << missing.err;
}

}  // namespace
