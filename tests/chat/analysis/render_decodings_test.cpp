// Render decodings: a template whose renders encode what the model writes (arguments passed
// through an escape filter) is analyzed on the decoded renders, so the parser and the grammar
// read the text the model writes. The decoding table, its evidence, and an invented template
// read end to end.
#include <gtest/gtest.h>

#include "chat/analysis/analysis_detail.h"
#include "chat/gen_test_support.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;

TEST(RenderDecodings, HtmlEntitiesDecodeAsMarkupsafeWritesThem) {
  struct row {
    const char* in;
    const char* out;
  };
  const std::vector<row> rows = {
      {"{&#34;city&#34;: &#34;Paris&#34;}", "{\"city\": \"Paris\"}"},
      {"&#39;a&#39; &#x27;b&#X27;", "'a' 'b'"},
      {"&quot;&apos;&lt;&gt;&amp;", "\"'<>&"},
      {"&amp;lt;", "&lt;"},  // one level only
      {"caf&#233; &#x1F600;", "caf\xC3\xA9 \xF0\x9F\x98\x80"},
      // Not references: kept as written.
      {"a & b; &#; &#x; &#0; &#xD800; &#x110000; &#12345678; &nbsp; &#34",
       "a & b; &#; &#x; "
       "&#0; &#xD800; "
       "&#x110000; "
       "&#12345678; &nbsp; "
       "&#34"},
      {"", ""},
  };
  for (const auto& r : rows) EXPECT_EQ(detail::decode_html_entities(r.in), r.out) << r.in;
}

TEST(RenderDecodings, EvidenceNeedsTheFilterAndAnEncodedCall) {
  const detail::render_decoding* d = detail::find_render_decoding("html-entities");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(detail::find_render_decoding("rot13"), nullptr);
  struct row {
    const char* source;
    const char* render;
    const char* evidence;  // "" : none
  };
  const std::vector<row> rows = {
      {"{{ x | tojson | e }}", "{&#34;a&#34;: 1}",
       "the source applies the filter 'e' and the call render writes \"&#34;\""},
      {"{{ x|escape }}", "&quot;a&quot;",
       "the source applies the filter 'escape' and the call render writes \"&quot;\""},
      {"{{ x | forceescape }}", "&lt;b&gt;",
       "the source applies the filter 'forceescape' and the call render writes \"&lt;\""},
      {"{{ x | tojson }}", "{&#34;a&#34;: 1}", ""},  // no escape filter: written as is
      {"{{ x | e }}", "{\"a\": 1}", ""},             // filtered, but nothing encoded
      {"{{ x | email }}", "&#34;", ""},              // another filter's name
  };
  for (const auto& r : rows) EXPECT_EQ(d->evidence(r.source, r.render), r.evidence) << r.source;
}

// A ChatML template whose call arguments are HTML-escaped (| tojson | e): the model writes the
// JSON, not its encoding.
constexpr const char* kEscapedCalls = R"T(
{%- if tools %}<|im_start|>system
Tools: {% for t in tools %}{{ t.function.name }} {% endfor %}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}
{%- for tc in message.tool_calls or [] %}
<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson | e }}}
</tool_call>{% endfor %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %})T";

TEST(RenderDecodings, EscapedCallsAreReadAsTheJsonTheModelWrites) {
  auto t = chat_template::create(kEscapedCalls);
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.render_decoding, "html-entities");
  EXPECT_EQ(a.tools.format, tool_format::json_native);
  EXPECT_EQ(a.tools.call_start, "<tool_call>\n");
  EXPECT_NE(a.note.find("the source applies the filter 'e'"), std::string::npos) << a.note;
  EXPECT_TRUE(a.tool_error.empty()) << a.tool_error;

  const request req = make_request(R"({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
        {"type": "object", "properties": {"city": {"type": "string"}, "days":
        {"type": "integer"}}, "required": ["city"]}}}]})");
  auto p = prepare(**t, req);
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  const std::string output =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris & "
      "Rome\", \"days\": 3}}\n</tool_call>";
  const std::string summary = parse_summary(*p, output);
  EXPECT_NE(summary.find("tool_name='get_weather'"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"Paris & Rome\""), std::string::npos) << summary;
  std::string why;
  EXPECT_TRUE(gbnf_accepts(*p, output, &why)) << why;
  // The encoding itself is not what the model writes: the grammar refuses it.
  EXPECT_FALSE(
      gbnf_accepts(*p,
                   "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {&#34;city&#34;: "
                   "&#34;Paris&#34;}}\n</tool_call>"));

  // The decoding is part of the analysis and survives its JSON.
  auto back = analysis::from_json(a.to_json());
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(back->render_decoding, "html-entities");
  json::value unknown = a.to_json();
  unknown["render_decoding"] = "rot13";
  auto refused = analysis::from_json(unknown);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().to_string().find("$.render_decoding"), std::string::npos)
      << refused.error().to_string();
}

}  // namespace
}  // namespace chatpeg::chat
