// Tests of stream::value_converter: JSON, Python and Gemma 4 values → compact JSON (table), the
// prefix property at every split point, close() giving valid JSON for every prefix, and the
// inputs it must reject.
#include "stream/value_converter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"

namespace chatpeg::stream {
namespace {

struct convert_case {
  const char* name;
  std::string input;
  std::string expected;
};

std::string convert(std::string_view text) {
  value_converter c;
  std::string out;
  c.feed(text, out);
  c.finish(out);
  EXPECT_FALSE(c.failed()) << text;
  EXPECT_TRUE(c.complete()) << text;
  return out;
}

const std::vector<convert_case>& cases() {
  static const std::vector<convert_case> table = {
      {"json_object", R"( { "a" : 1, "b": [true, false, null] , "c": "x\"y\u00e9\/" } )",
       R"({"a":1,"b":[true,false,null],"c":"x\"y\u00e9\/"})"},
      {"json_nested", R"({"a": {"b": {"c": [[], {}, [1, -2.5e+3, 0]]}}})",
       R"({"a":{"b":{"c":[[],{},[1,-2.5e+3,0]]}}})"},
      {"json_string_top", R"("hi there")", R"("hi there")"},
      {"json_number_top", "42", "42"},
      {"utf8_passthrough", R"({"city": "Zürich 東京 🚀"})", R"({"city":"Zürich 東京 🚀"})"},
      {"python_dict", R"({'a': True, 'b': None, 'c': (1, 2,), 'd': 'it\'s "q"', 'e': False})",
       R"({"a":true,"b":null,"c":[1,2],"d":"it's \"q\"","e":false})"},
      {"python_trailing_commas", "[1, [2, 3,], {'k': 'v',},]", R"([1,[2,3],{"k":"v"}])"},
      {"python_tuple_single", "(1,)", "[1]"},
      {"python_empty", "[(), {}, []]", "[[],{},[]]"},
      {"python_escapes", R"('\x41\101\n\t\U0001F600\a\q\\')", R"("AA\n\t😀\u0007\\q\\")"},
      {"python_double_quoted_escape", R"("it\'s")", R"("it's")"},
      {"python_numbers", "[5., .5, 1_000, -0.25]", "[5.0,0.5,1000,-0.25]"},
      {"python_number_then_close", "(5.)", "[5.0]"},
      // Zero-padded integers (models write them; Python refuses them): the zeros dropped.
      {"python_zero_padded", "[07, 05, -007, 0, 0.5, -0, 100]", "[7,5,-7,0,0.5,-0,100]"},
      {"python_zero_padded_top", "07", "7"},
      // A string that is the whole value ends at its last byte: inner quotes are text.
      {"python_unescaped_quotes_top", "'sed -n '1,5p' f.py'", R"("sed -n '1,5p' f.py")"},
      {"python_unescaped_quote_then_space", "'a' b'", R"("a' b")"},
      {"json_string_top_trailing_space", "\"hi\"  \n", R"("hi")"},
      {"nested_strings_close_as_usual", "['a', 'b']", R"(["a","b"])"},
      {"control_chars_in_string", "'a\tb'", R"("a\tb")"},
      {"raw_text", "hello world", R"("hello world")"},
      {"raw_text_word_like", "Truest nonsense", R"("Truest nonsense")"},
      {"raw_text_with_quotes", "<b>\"x\"</b>", R"("<b>\"x\"</b>")"},
      // Gemma 4: <|"|> quotes raw text, bare identifier keys.
      {"gemma_dict",
       R"({brand:None,discontinued:false,in_stock:true,price:{max:99.5,min:0},)"
       R"(tags:[<|"|>red<|"|>,<|"|>blue<|"|>]})",
       R"({"brand":null,"discontinued":false,"in_stock":true,"price":{"max":99.5,"min":0},)"
       R"("tags":["red","blue"]})"},
      {"gemma_raw_string",
       "{q:<|\"|>He said \"hello\" \\ C:\\temp\\new\nline two: 中文 🌍 </tool_call> "
       "{\"fake\": true}}<|\"|>}",
       R"({"q":"He said \"hello\" \\ C:\\temp\\new\nline two: 中文 🌍 </tool_call> )"
       R"({\"fake\": true}}"})"},
      {"gemma_quote_lookalikes", R"([<|"|>a<|b<|"c<|"|d<<|"|>, <|"|><|"|>])",
       R"(["a<|b<|\"c<|\"|d<",""])"},
      {"gemma_control_chars", "[<|\"|>a\tb\x01\r<|\"|>]", R"(["a\tb\u0001\r"])"},
      {"gemma_keys", R"({<|"|>a b<|"|>: 1, c_d-e.f$9 : [True, None], $x :{}, y:[]})",
       R"({"a b":1,"c_d-e.f$9":[true,null],"$x":{},"y":[]})"},
      {"gemma_spaced", "{ a : 1 ,\n b :<|\"|> <|\"|> , }", R"({"a":1,"b":" "})"},
      {"gemma_top_string", R"(<|"|>x "y"<|"|>)", R"("x \"y\"")"},
      {"raw_text_quote_lookalike", R"(<|"x)", R"("<|\"x")"},
      {"raw_text_partial_quote", R"(<|"|)", R"("<|\"|")"},
  };
  return table;
}

TEST(ValueConverter, ConvertsTable) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(convert(c.input), c.expected);
    if (c.expected.front() != '"') {
      EXPECT_TRUE(json::parse(c.expected).has_value());
    }
  }
}

// Every split point: the output after the first piece prefixes the final output, and the
// pieces together give the same final output.
TEST(ValueConverter, PrefixPropertyAtEverySplit) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    for (std::size_t k = 0; k <= c.input.size(); ++k) {
      value_converter conv;
      std::string out;
      conv.feed(std::string_view(c.input).substr(0, k), out);
      ASSERT_EQ(c.expected.compare(0, out.size(), out), 0) << "split " << k << ": " << out;
      conv.feed(std::string_view(c.input).substr(k), out);
      conv.finish(out);
      EXPECT_EQ(out, c.expected) << "split " << k;
    }
  }
}

// close() on any prefix gives one valid JSON value that extends the prefix's output.
TEST(ValueConverter, CloseMakesEveryPrefixValid) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    for (std::size_t k = 1; k <= c.input.size(); ++k) {
      const std::string_view prefix = std::string_view(c.input).substr(0, k);
      if (base::utf8_incomplete_tail(prefix) != 0) continue;  // the mapper never feeds these
      value_converter conv;
      std::string out;
      conv.feed(prefix, out);
      const std::string before = out;
      conv.close(out);
      if (!conv.started()) {
        EXPECT_EQ(out, "");
        continue;
      }
      EXPECT_EQ(out.compare(0, before.size(), before), 0);
      EXPECT_TRUE(conv.complete());
      auto v = json::parse(out);
      EXPECT_TRUE(v.has_value()) << "prefix " << k << ": " << out;
    }
  }
}

TEST(ValueConverter, CloseTable) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {R"({"a": "x)", R"({"a":"x"})"},
      // A key whose value has not begun is left out (with its comma), at any depth.
      {R"({"a)", "{}"},
      {R"({"a")", "{}"},
      {R"({"a":)", "{}"},
      {R"({"a": )", "{}"},
      {R"({"a":1, "b)", R"({"a":1})"},
      {R"({"a":1, "b": )", R"({"a":1})"},
      {R"({"q": "x", "filters": {"a": )", R"({"q":"x","filters":{}})"},
      {R"({"q": "x", "filters": {"a": 1, "b)", R"({"q":"x","filters":{"a":1}})"},
      {R"({"k\u00e9": )", "{}"},
      {R"({"k\ud83c\udf0d)", "{}"},
      {"{'a': 'x', 'b': ", R"({"a":"x"})"},
      {R"({"a": ")", R"({"a":""})"},  // the value began: a string
      {"[1,", "[1]"},
      {R"({"a": tr)", R"({"a":true})"},
      {"{'a': (1, Fal", R"({"a":[1,false]})"},
      {"{'a': N", R"({"a":null})"},
      {R"({"a": 1.)", R"({"a":1.0})"},
      {R"({"a": 1e)", R"({"a":1e0})"},
      {"-", "-0"},
      {R"("ab\u00)", R"("ab")"},
      {R"('ab\10)", R"("ab\u0008")"},
      {"raw te", R"("raw te")"},
      // Cut between the halves of a surrogate pair: the lone high half is dropped.
      {R"("a\ud83c)", R"("a")"},
      {R"("a\ud83c\udf)", R"("a")"},
      {R"("a\ud83c\udf0d)", R"("a\ud83c\udf0d")"},
      {R"("a\ud83cb)", R"("a\ud83cb")"},
      // Gemma: a partial closing <|"|> is dropped; a cut bare key is left out.
      {R"({a:<|"|>x<|"|)", R"({"a":"x"})"},
      {R"({a:<|"|>x<|)", R"({"a":"x"})"},
      {R"({a:<|"|>x<)", R"({"a":"x"})"},
      {R"({a:<|")", R"({"a":""})"},
      {R"({a:<)", R"({"a":""})"},
      {"{bra", "{}"},
      {"{brand ", "{}"},
      {"{brand:", "{}"},
      {"{brand:No", R"({"brand":null})"},
      {"{a:1,b", R"({"a":1})"},
      {"{a:1,b:", R"({"a":1})"},
      {"{a:1,b:{c:", R"({"a":1,"b":{}})"},
      {R"([<|"|>a<|"|>,<|"|>b)", R"(["a","b"])"},
      {R"({<|"|>k)", "{}"},
      {R"({<|"|>k<|"|>:)", "{}"},
      {R"({<|"|>k<|"|>:<|"|>v)", R"({"k":"v"})"},
      {R"(<|"|>ab)", R"("ab")"},
      {R"(<|")", R"("<|\"")"},  // at the very start, a partial quote may be raw text
  };
  for (const auto& [input, expected] : table) {
    value_converter conv;
    std::string out;
    conv.feed(input, out);
    conv.close(out);
    EXPECT_EQ(out, expected) << input;
  }
}

// The key of the value (an argument's, handed in) waits for the value's first byte: close()
// leaves it out when none came, finish() writes it, and a value that begins writes it first.
TEST(ValueConverter, KeyWaitsForTheFirstByteOfItsValue) {
  const auto converted = [](std::string_view text, bool close) {
    value_converter conv;
    conv.key().text() = R"(,"k":)";
    std::string out;
    conv.feed(text, out);
    const std::string before = out;
    if (close) {
      conv.close(out);
    } else {
      conv.finish(out);
    }
    return before + " | " + out;
  };
  EXPECT_EQ(converted("  ", true), " | ");
  EXPECT_EQ(converted("  ", false), R"( | ,"k":)");
  EXPECT_EQ(converted(" \"a", true), R"(,"k":"a | ,"k":"a")");
  EXPECT_EQ(converted(" t", true), R"(,"k": | ,"k":true)");  // a word began
  EXPECT_EQ(converted(R"( {"x)", true), R"(,"k":{ | ,"k":{})");
  EXPECT_EQ(converted(R"( {"x": 1})", false), R"(,"k":{"x":1} | ,"k":{"x":1})");
}

TEST(ValueConverter, RejectsWhatIsNeitherJsonNorPython) {
  const std::vector<std::string> bad = {
      "{1: 2}",
      "[1 2]",
      "[Nonsense]",
      "{\"a\" 1}",
      "[1]]",
      "{\"a\": 1,, }",
      "0x10",
      "[tru e]",
      // Gemma: bare keys only as keys, <|"|> only whole inside containers.
      "{a b: 1}",
      "{a}",
      "{a:b}",
      "[a]",
      "[<|x]",
      "{<|'|>k<|'|>:1}",
      "{1a: 2}",
      "<|\"|>x<|\"|>y",
      "{a:1}}",
  };
  for (const auto& input : bad) {
    value_converter conv;
    std::string out;
    conv.feed(input, out);
    conv.finish(out);
    EXPECT_TRUE(conv.failed() || !conv.complete()) << input << " → " << out;
  }
}

TEST(ValueConverter, BoundsNesting) {
  value_converter conv;
  std::string out;
  conv.feed(std::string(value_converter::max_depth + 10, '['), out);
  EXPECT_TRUE(conv.failed());
  EXPECT_EQ(out.size(), value_converter::max_depth);
}

// Fed one byte at a time, the output after every byte prefixes the final output.
TEST(ValueConverter, PrefixPropertyByteByByte) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    value_converter conv;
    std::string out;
    for (std::size_t k = 0; k < c.input.size(); ++k) {
      conv.feed(std::string_view(c.input).substr(k, 1), out);
      ASSERT_EQ(c.expected.compare(0, out.size(), out), 0) << "byte " << k << ": " << out;
    }
    conv.finish(out);
    EXPECT_EQ(out, c.expected);
  }
}

// A partial <|"|> at the end of a feed is held back until the next byte decides it.
TEST(ValueConverter, HoldsBackPartialGemmaQuote) {
  value_converter conv;
  std::string out;
  conv.feed(R"({k:<|"|>a<|")", out);
  EXPECT_EQ(out, R"({"k":"a)");
  conv.feed("|", out);
  EXPECT_EQ(out, R"({"k":"a)");
  conv.feed("x", out);  // not a quote after all: the held text is string content
  EXPECT_EQ(out, R"({"k":"a<|\"|x)");
  conv.feed("<|\"|", out);
  EXPECT_EQ(out, R"({"k":"a<|\"|x)");
  conv.feed(">}", out);
  EXPECT_EQ(out, R"({"k":"a<|\"|x"})");
  EXPECT_TRUE(conv.complete());
}

TEST(ValueConverter, HoldsBackWordsAndCommas) {
  value_converter conv;
  std::string out;
  conv.feed("[Tru", out);
  EXPECT_EQ(out, "[");
  conv.feed("e,", out);
  EXPECT_EQ(out, "[true");
  conv.feed(" ", out);
  EXPECT_EQ(out, "[true");
  conv.feed("]", out);
  EXPECT_EQ(out, "[true]");
  EXPECT_TRUE(conv.complete());
}

// The bulk fast paths of feed() (verbatim string runs with their escapes, raw text, Gemma
// strings) against the byte-by-byte state machine: a feed of one byte never holds a whole
// escape or more than one byte of a run, so it takes step() for everything the fast paths
// batch. Random values from pieces (escapes of every kind, surrogate halves, cut and invalid
// escapes, UTF-8, control bytes, quotes of the other kind, runs crossing 8-byte boundaries),
// fed whole, byte by byte and split at a random point; finish() and close() must agree too.
std::string converted(std::string_view text, const std::vector<std::size_t>& cuts, bool close) {
  value_converter conv;
  std::string out;
  std::size_t from = 0;
  for (const std::size_t cut : cuts) {
    conv.feed(text.substr(from, cut - from), out);
    from = cut;
  }
  conv.feed(text.substr(from), out);
  if (close) {
    conv.close(out);
  } else {
    conv.finish(out);
  }
  return out + (conv.failed() ? " [failed]" : "") + (conv.complete() ? " [complete]" : "");
}

TEST(ValueConverter, FastPathsMatchByteByByte) {
  static const std::vector<std::string> pieces = {"abc",
                                                  "defghijklmnopqrstu",
                                                  "\\\"",
                                                  "\\\\",
                                                  "\\/",
                                                  "\\n",
                                                  "\\t",
                                                  "\\b\\f\\r",
                                                  "\\u00e9",
                                                  "\\u00E9",
                                                  "\\uD83D",
                                                  "\\uDE00",
                                                  "\\uD83D\\uDE00",
                                                  "\\uZZ",
                                                  "\\u12",
                                                  "\\x41",
                                                  "\\101",
                                                  "\\7",
                                                  "\\'",
                                                  "\\q",
                                                  "\\U0001F600",
                                                  "\\\n",
                                                  "'",
                                                  "\"",
                                                  "\xC3\xA9",
                                                  "\xF0\x9F\x98\x80",
                                                  "\t",
                                                  "\x01",
                                                  "\n",
                                                  "<|\"|>",
                                                  "<",
                                                  "<|",
                                                  " ",
                                                  "\\",
                                                  "\\u"};
  static const std::vector<std::string> openers = {
      "\"", "'", "{\"k\": \"", "['", "<|\"|>", "{k:<|\"|>", "raw ", "[\"a\", '"};
  std::mt19937 rng(31);
  for (int i = 0; i < 4000; ++i) {
    std::string text = openers[rng() % openers.size()];
    const std::size_t n = rng() % 14;
    for (std::size_t k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    std::vector<std::size_t> bytes;
    for (std::size_t k = 1; k < text.size(); ++k) bytes.push_back(k);
    const std::size_t split = rng() % (text.size() + 1);
    for (const bool close : {false, true}) {
      const std::string slow = converted(text, bytes, close);
      ASSERT_EQ(converted(text, {}, close), slow) << text << " close " << close;
      ASSERT_EQ(converted(text, {split}, close), slow) << text << " split " << split;
    }
  }
}

}  // namespace
}  // namespace chatpeg::stream
