// chat_template::create and render_context: parse errors, options, analysis override, the
// differential stages on small handwritten templates (incl. failures naming their stage), and
// concurrent use of one template.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

const char* const chat_loop_head = "{% for m in messages %}<|{{ m.role }}|>";
const char* const chat_loop_tail =
    "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
const char* const tools_list =
    "{% if tools %}{% for t in tools %}{{ t.function.name }} {% endfor %}{% endif %}";

std::string chat_template_with(const std::string& body) {
  return std::string(tools_list) + chat_loop_head + body + chat_loop_tail;
}

TEST(Template, ParseErrorIsReturnedWithLocation) {
  auto t = chat_template::create("{% for m in messages %}{{ m.content }", {.file = "bad.jinja"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, base::errc::syntax_error);
  EXPECT_EQ(t.error().where.file, "bad.jinja");
}

TEST(Template, SpecialTokensMustBeAnObject) {
  auto t = chat_template::create("x", {.special_tokens = json::value::array()});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, base::errc::invalid_argument);
}

TEST(Template, AnalysisOverrideIsUsed) {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.call_start = "<call>";
  auto t = chat_template::create("{{ messages[0].content }}", {.analysis_override = a});
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().source, analysis_source::loaded);
  EXPECT_EQ((*t)->analysis().tools.call_start, "<call>");
}

TEST(Template, RenderContextMergesSpecialTokens) {
  auto t = chat_template::create("{{ bos_token }}{{ messages[0].content }}{{ tools is none }}",
                                 {.special_tokens = {{"bos_token", "<s>"}}});
  ASSERT_TRUE(t);
  auto out = (*t)->render_context({{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(*out, "<s>hiTrue");
  auto bad = (*t)->render_context(json::value::array());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, base::errc::invalid_argument);
}

// Requests render with `tools` undefined when they have none (as the reference does): a
// template that loops over tools unconditionally must not fail on None.
TEST(Template, RenderRequestLeavesToolsUndefined) {
  auto t = chat_template::create(
      "{% for t in tools %}{{ t.function.name }} {% endfor %}{{ tools is defined }}|"
      "{{ documents is defined }}|{{ messages[0].content }}");
  ASSERT_TRUE(t);
  const json::value vars = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  auto out = (*t)->render_request(vars);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(*out, "False|False|hi");
  EXPECT_FALSE((*t)->render_context(vars));  // transformers' None is not iterable
  json::value with = vars;
  with["tools"] = json::value::array({{{"function", {{"name", "f"}}}}});
  auto listed = (*t)->render_request(with);
  ASSERT_TRUE(listed) << listed.error().to_string();
  EXPECT_EQ(*listed, "f True|False|hi");
}

// `tools | map(attribute='function') | tojson` raises in Python's sandbox (a generator is not
// JSON serializable); requests render it as the reference does, through the compat retry.
TEST(Template, RenderRequestRetriesInCompatibilityMode) {
  auto t = chat_template::create("{{ tools | map(attribute='function') | tojson }}");
  ASSERT_TRUE(t);
  const json::value vars = {{"messages", json::value::array()},
                            {"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}}};
  EXPECT_FALSE((*t)->render_context(vars));
  auto out = (*t)->render_request(vars);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(*out, "[{\"name\": \"f\"}]");
}

TEST(Template, DifferentialJsonNative) {
  auto t = chat_template::create(chat_template_with(
      "{{ m.content }}{% if m.tool_calls %}<tools>[{% for tc in m.tool_calls %}{\"name\": \"{{ "
      "tc.function.name }}\", \"arguments\": {{ tc.function.arguments | tojson }}, \"id\": \"{{ "
      "tc.id "
      "}}\"}{% if not loop.last %}, {% endif %}{% endfor %}]</tools>{% endif %}"));
  ASSERT_TRUE(t);
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.tool_error, "");
  EXPECT_EQ(a.tools.format, tool_format::json_native);
  EXPECT_TRUE(a.tools.array_wrapped);
  EXPECT_EQ(a.tools.section_start, "<tools>");
  EXPECT_EQ(a.tools.section_end, "</tools>");
  EXPECT_EQ(a.tools.call_separator, ", ");
  EXPECT_EQ(a.tools.id_key, "id");
  EXPECT_EQ(a.preserved_tokens, (std::vector<std::string>{"<tools>", "</tools>"}));
}

// Calls numbered by the template instead of carrying the request's id (Cohere's
// "tool_call_id": "0"), written before the name: the numbered field is the id field.
// Calls the template numbers after the name (Kimi K2's "functions.NAME:0"), from 0 or 1.
TEST(Template, DifferentialTagWithJsonIndexAfterName) {
  for (const char* index : {"loop.index0", "loop.index"}) {
    auto t = chat_template::create(chat_template_with(
        std::string(
            "{{ m.content }}{% for tc in m.tool_calls %}<call>fn.{{ tc.function.name }}:{{ ") +
        index + " }}<args>{{ tc.function.arguments | tojson }}</call>{% endfor %}"));
    ASSERT_TRUE(t);
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.tool_error, "") << index;
    EXPECT_EQ(a.tools.id_pos, id_position::after_name) << index;
    EXPECT_EQ(a.tools.id_prefix, ":") << index;
    EXPECT_EQ(a.tools.args_start, "<args>") << index;
  }
}

TEST(Template, DifferentialJsonNativeIndexIds) {
  auto t = chat_template::create(chat_template_with(
      "{{ m.content }}{% if m.tool_calls %}<act>[{% for tc in m.tool_calls %}{\"tool_call_id\": "
      "\"{{ loop.index0 }}\", \"tool_name\": \"{{ tc.function.name }}\", \"parameters\": {{ "
      "tc.function.arguments | tojson }}}{% if not loop.last %}, {% endif %}{% endfor %}]</act>{% "
      "endif %}"));
  ASSERT_TRUE(t);
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.tool_error, "");
  EXPECT_EQ(a.tools.name_key, "tool_name");
  EXPECT_EQ(a.tools.arguments_key, "parameters");
  EXPECT_EQ(a.tools.id_key, "tool_call_id");
}

const std::string json_calls_body =
    "{{ m.content }}{% for tc in m.tool_calls %}<call>{\"name\": \"{{ tc.function.name }}\", "
    "\"arguments\": {{ tc.function.arguments | tojson }}}</call>{% endfor %}";

// Dedicated rows and fix-ups are chosen by predicates on the source. A template that matches
// one but writes its calls otherwise is read by differential analysis when that reads back
// the template's own calls (with a note); when nothing does, the row stays, with its error.
TEST(Template, PredicateMatchesThatDoNotReadBackFallBack) {
  const struct {
    const char* name;
    std::string source;
    const char* handler;  // kept handler ("" = differential)
    const char* note;     // in analysis.note ("" = no note)
    bool error;
  } rows[] = {
      {"dedicated row, json calls",
       "{# [TOOL_CALLS] [ARGS] #}" + chat_template_with(json_calls_body), "",
       "dedicated format 'ministral-3'", false},
      {"fix-up, json calls",
       "{# <|CHATBOT_TOKEN|> Action: #}" + chat_template_with(json_calls_body), "", "the fix-ups",
       false},
      // Nothing reads "<call>fn.NAME:a<args>{...}" back: the row stays, with the verify error.
      {"dedicated row, unreadable calls",
       "{# [TOOL_CALLS] [ARGS] #}" +
           chat_template_with("{{ m.content }}{% for tc in m.tool_calls %}<call>fn.{{ "
                              "tc.function.name }}:{{ 'abcdefgh'[loop.index0] }}<args>{{ "
                              "tc.function.arguments | tojson }}</call>{% endfor %}"),
       "ministral-3", "", true},
      {"no predicate", chat_template_with(json_calls_body), "", "", false},
  };
  for (const auto& r : rows) {
    auto t = chat_template::create(r.source);
    ASSERT_TRUE(t) << r.name << ": " << t.error().to_string();
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.handler, r.handler) << r.name;
    if (*r.note == '\0') {
      EXPECT_EQ(a.note, "") << r.name;
    } else {
      EXPECT_NE(a.note.find(r.note), std::string::npos) << r.name << ": " << a.note;
      EXPECT_TRUE(a.fixups.empty()) << r.name;
    }
    EXPECT_EQ(a.tool_error.empty(), !r.error) << r.name << ": " << a.tool_error;
    if (r.error) {
      EXPECT_NE(a.tool_error.find("verify"), std::string::npos) << a.tool_error;
    }
  }
}

// A call turn that ends with the calls' closing marker where a content turn ends with its own
// end marker (harmony: "<|call|>" vs "<|end|>"): the closing marker is an end-of-generation
// token. Where the usual end marker follows the calls, it is not.
TEST(Template, CloseEndsTurn) {
  const std::string calls =
      "{% for tc in m.tool_calls %}<call>{\"name\": \"{{ tc.function.name }}\", \"arguments\": "
      "{{ tc.function.arguments | tojson }}}</call>{% endfor %}";
  const std::string harmony = std::string(tools_list) + chat_loop_head + "{% if m.tool_calls %}" +
                              calls +
                              "{% else %}{{ m.content }}<|end|>{% endif %}{% endfor "
                              "%}{% if add_generation_prompt %}<|assistant|>{% endif %}";
  auto t = chat_template::create(harmony);
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().tool_error, "");
  EXPECT_EQ((*t)->analysis().tools.call_end, "</call>");
  EXPECT_TRUE((*t)->analysis().tools.close_ends_turn) << (*t)->analysis().summary();
  auto usual = chat_template::create(chat_template_with("{{ m.content }}" + calls));
  ASSERT_TRUE(usual);
  EXPECT_EQ((*usual)->analysis().tool_error, "");
  EXPECT_FALSE((*usual)->analysis().tools.close_ends_turn) << (*usual)->analysis().summary();
}

// Python-style calls ("[f(a='x'), g(b=1)]", LFM2, Llama 3.2 pythonic, ToolACE), with or without
// markers around the list, with a space or no separator between arguments (each JSON value
// ends itself: "f(a=\"x\"b=1)").
TEST(Template, DifferentialPythonic) {
  const auto calls = [](const char* open, const char* close, const char* arg_sep) {
    return std::string("{{ m.content }}{% if m.tool_calls %}") + open +
           "{% for tc in m.tool_calls %}{{ tc.function.name }}({% for k, v in "
           "tc.function.arguments.items() %}{{ k }}={{ v | tojson }}{% if not loop.last %}" +
           arg_sep + "{% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}" +
           close + "{% endif %}";
  };
  const struct {
    const char* name;
    std::string body;
    const char* section_start;
    bool error;
  } rows[] = {
      {"bare list", calls("[", "]", ", "), "", false},
      {"list in markers", calls("<|calls|>[", "]<|/calls|>", ", "), "<|calls|>", false},
      {"no argument separator", calls("[", "]", ""), "", false},
      {"space between arguments", calls("[", "]", " "), "", false},
  };
  for (const auto& r : rows) {
    auto t = chat_template::create(chat_template_with(r.body));
    ASSERT_TRUE(t) << r.name;
    const analysis& a = (*t)->analysis();
    if (r.error) {
      EXPECT_NE(a.tool_error, "") << r.name << ": " << a.summary();
      continue;
    }
    EXPECT_EQ(a.tool_error, "") << r.name << ": " << a.summary();
    EXPECT_TRUE(a.tools.pythonic) << r.name;
    EXPECT_TRUE(a.tools.array_wrapped) << r.name;
    EXPECT_EQ(a.tools.section_start, r.section_start) << r.name;
    EXPECT_EQ(a.tools.name_suffix, "(") << r.name;
    EXPECT_EQ(a.tools.args_end, ")") << r.name;
    EXPECT_EQ(a.tools.arg_name_suffix, "=") << r.name;
    EXPECT_EQ(a.tools.call_separator, ", ") << r.name;
    // The call's punctuation is not a special token.
    for (const char* p : {"(", ")", "=", "[", "]"})
      EXPECT_EQ(std::count(a.preserved_tokens.begin(), a.preserved_tokens.end(), p), 0) << p;
  }
}

TEST(Template, DifferentialTagged) {
  auto t = chat_template::create(
      chat_template_with("{{ m.content }}{% for tc in m.tool_calls %}<call>\n<fn={{ "
                         "tc.function.name }}>\n{% for k, v in "
                         "tc.function.arguments.items() %}<p={{ k }}>{{ v }}</p>\n{% endfor "
                         "%}</fn>\n</call>\n{% endfor %}"));
  ASSERT_TRUE(t);
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.tool_error, "");
  EXPECT_EQ(a.tools.format, tool_format::tag_with_tagged);
  EXPECT_EQ(a.tools.call_start, "<call>\n");
  EXPECT_EQ(a.tools.name_prefix, "<fn=");
  EXPECT_EQ(a.tools.name_suffix, ">\n");
  EXPECT_EQ(a.tools.arg_name_prefix, "<p=");
  EXPECT_EQ(a.tools.arg_name_suffix, ">");
  EXPECT_EQ(a.tools.arg_value_end, "</p>\n");
  EXPECT_EQ(a.tools.call_end, "</fn>\n</call>");
  EXPECT_EQ(a.tools.values, value_syntax::raw);
  EXPECT_TRUE(a.caps.requires_object_arguments);
}

TEST(Template, DifferentialTagWithJson) {
  auto t = chat_template::create(
      chat_template_with("{{ m.content }}{% for tc in m.tool_calls %}<fn={{ tc.function.name }}>{{ "
                         "tc.function.arguments | tojson }}</fn>{% endfor %}"));
  ASSERT_TRUE(t);
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.tool_error, "");
  EXPECT_EQ(a.tools.format, tool_format::tag_with_json);
  EXPECT_EQ(a.tools.name_prefix, "<fn=");
  EXPECT_EQ(a.tools.name_suffix, ">");
  EXPECT_EQ(a.tools.call_end, "</fn>");
}

TEST(Template, ReasoningMarkersFromHistory) {
  auto t = chat_template::create(
      chat_template_with("{% if m.reasoning_content %}[THINK]{{ m.reasoning_content }}[/THINK]{% "
                         "endif %}{{ m.content }}"));
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().reasoning.mode, reasoning_mode::tag_based);
  EXPECT_EQ((*t)->analysis().reasoning.start, "[THINK]");
  EXPECT_EQ((*t)->analysis().reasoning.end, "[/THINK]");
}

// A template that keeps an empty block in history turns and drops the reasoning text.
TEST(Template, ReasoningMarkersFromAnEmptyHistoryBlock) {
  auto t = chat_template::create(chat_template_with("<rz></rz>{{ m.content }}"));
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().reasoning.mode, reasoning_mode::tag_based);
  EXPECT_EQ((*t)->analysis().reasoning.start, "<rz>");
  EXPECT_EQ((*t)->analysis().reasoning.end, "</rz>");
  auto plain = chat_template::create(chat_template_with("<rz>{{ m.content }}"));
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)->analysis().reasoning.mode, reasoning_mode::none);
}

// Templates that never render reasoning_content: the markers come from the generation prompt,
// which adds an empty block when thinking is off ("<think>\n\n</think>", or two markers
// that are not a tag and its closer, as Command R7B's).
TEST(Template, ReasoningMarkersFromTheEmptyBlock) {
  const struct {
    const char* block;
    const char* start;
    const char* end;
  } rows[] = {{"<think>\n\n</think>\n\n", "<think>", "</think>"},
              {"<|START_THINKING|><|END_THINKING|>", "<|START_THINKING|>", "<|END_THINKING|>"}};
  for (const auto& r : rows) {
    auto t = chat_template::create(
        std::string(chat_loop_head) +
        "{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% if "
        "enable_thinking is defined and not enable_thinking %}" +
        r.block + "{% endif %}{% endif %}");
    ASSERT_TRUE(t);
    EXPECT_EQ((*t)->analysis().reasoning.mode, reasoning_mode::tag_based) << r.block;
    EXPECT_EQ((*t)->analysis().reasoning.start, r.start);
    EXPECT_EQ((*t)->analysis().reasoning.end, r.end);
  }
}

// A dedicated row's reasoning markers are its family's; a template matching its predicate that
// thinks in other markers gets those the reasoning stage finds (kept when it finds none).
TEST(Template, DedicatedRowTakesTheTemplatesReasoningMarkers) {
  const std::string body = "{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}";
  auto other = chat_template::create("{# DSML #}" + std::string(chat_loop_head) + body +
                                     "<|assistant|><rz>{% endif %}{# </rz> #}");
  ASSERT_TRUE(other);
  EXPECT_EQ((*other)->analysis().handler, "deepseek-v3.2-dsml");
  EXPECT_EQ((*other)->analysis().reasoning.start, "<rz>");
  EXPECT_EQ((*other)->analysis().reasoning.end, "</rz>");
  auto own = chat_template::create("{# DSML <think></think> #}" + std::string(chat_loop_head) +
                                   body + "<|assistant|><rz>{% endif %}{# </rz> #}");
  ASSERT_TRUE(own);
  EXPECT_EQ((*own)->analysis().reasoning.start, "<think>");
  auto none = chat_template::create("{# DSML #}" + std::string(chat_loop_head) + body +
                                    "<|assistant|>{% endif %}");
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)->analysis().reasoning.start, "<think>");
}

TEST(Template, StageFailureNamesTheStage) {
  // Tools are listed but an assistant turn with calls raises.
  auto raising = chat_template::create(chat_template_with(
      "{% if m.tool_calls %}{{ raise_exception('no calls') }}{% endif %}{{ m.content }}"));
  ASSERT_TRUE(raising);
  EXPECT_NE(raising.value()->analysis().tool_error.find("tool-call stage 'render'"),
            std::string::npos);
  EXPECT_EQ(raising.value()->analysis().tools.format, tool_format::none);
  // No tools at all: no error, no format.
  auto plain =
      chat_template::create(std::string(chat_loop_head) + "{{ m.content }}" + chat_loop_tail);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain.value()->analysis().tool_error, "");
}

TEST(Template, ConcurrentUse) {
  auto t = chat_template::create(chat_template_with("{{ m.content }}"),
                                 {.special_tokens = {{"eos_token", "</s>"}}});
  ASSERT_TRUE(t);
  std::shared_ptr<const chat_template> shared = *t;
  std::string expected = shared->analysis().summary();
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        auto out = shared->render_context(
            {{"messages", {{{"role", "user"}, {"content", std::to_string(k)}}}}});
        if (out && out->find("<|user|>" + std::to_string(k)) != std::string::npos &&
            shared->analysis().summary() == expected)
          ++ok[i];
      }
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ok[i], 50);
}

}  // namespace
}  // namespace chatpeg::chat
