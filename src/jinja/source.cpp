// Template source loaders: .jinja files, tokenizer_config.json (string or named-list
// chat_template, bos/eos as strings or {"content": ...}) and GGUF metadata. The GGUF reader
// treats the file as hostile: it reads only the header (key/value section), checks every
// length and count against the bytes that remain before allocating, caps entry counts, and
// reports truncation with the byte offset.
#include "chatpeg/jinja/source.h"

#include <cstring>
#include <fstream>

#include "chatpeg/base/file.h"

namespace chatpeg::jinja {
namespace {

base::error bad(base::errc code, std::string msg, const std::string& file = {},
                std::size_t offset = base::npos) {
  base::location where;
  where.file = file;
  where.offset = offset;
  return base::make_error(code, std::move(msg), where);
}

std::string wanted_name(const load_options& o) {
  return o.name.empty() ? "default" : o.name;
}

// ---- GGUF ----

class gguf_reader {
 public:
  gguf_reader(std::string_view bytes, const load_options& o) : b_(bytes), opts_(o) {}
  bool truncated = false;  // failed for lack of bytes (a longer prefix may parse)

  base::result<template_source> run() {
    std::uint32_t magic = 0, version = 0;
    if (!u32(magic) || magic != 0x46554747u) return fail("not a GGUF file (bad magic)");
    if (!u32(version)) return fail("truncated GGUF header");
    if (version != 2 && version != 3)
      return fail("unsupported GGUF version " + std::to_string(version));
    std::uint64_t tensors = 0, kv = 0;
    if (!u64(tensors) || !u64(kv)) return fail("truncated GGUF header");
    if (kv > opts_.max_gguf_entries)
      return fail("GGUF metadata count " + std::to_string(kv) + " is implausible");
    std::string want = wanted_name(opts_);
    template_source out;
    std::string chosen;
    bool found = false;
    std::int64_t bos_id = -1, eos_id = -1;
    std::size_t tokens_at = 0;
    std::uint64_t tokens_count = 0;
    for (std::uint64_t i = 0; i < kv; ++i) {
      std::string key;
      std::uint32_t type = 0;
      if (!str(key) || !u32(type)) return fail("truncated GGUF metadata");
      bool is_tmpl =
          key == "tokenizer.chat_template" || key.rfind("tokenizer.chat_template.", 0) == 0;
      if (key == "tokenizer.response_template" && type == 8) {
        if (!str(out.response_template, opts_.max_template_bytes)) {
          return fail("bad response template string in GGUF");
        }
        continue;
      }
      if (is_tmpl && type == 8) {
        std::string name = key == "tokenizer.chat_template" ? "default" : key.substr(24);
        std::string text;
        if (!str(text, opts_.max_template_bytes)) return fail("bad chat template string in GGUF");
        out.variants.push_back(name);
        if (name == want) {
          chosen = std::move(text);
          found = true;
        }
        continue;
      }
      if ((key == "tokenizer.ggml.bos_token_id" || key == "tokenizer.ggml.eos_token_id") &&
          (type == 4 || type == 5 || type == 10 || type == 11)) {
        std::uint64_t id = 0;
        if (type == 4 || type == 5) {
          std::uint32_t v = 0;
          if (!u32(v)) return fail("truncated GGUF metadata");
          id = v;
        } else if (!u64(id)) {
          return fail("truncated GGUF metadata");
        }
        (key == "tokenizer.ggml.bos_token_id" ? bos_id : eos_id) =
            static_cast<std::int64_t>(id & 0x7fffffffffffffffull);
        continue;
      }
      if (key == "tokenizer.ggml.tokens" && type == 9) {
        std::size_t at = pos_;
        std::uint32_t et = 0;
        std::uint64_t n = 0;
        if (!u32(et) || !u64(n)) return fail("truncated GGUF metadata");
        if (et == 8) {
          tokens_at = pos_;
          tokens_count = n;
        }
        pos_ = at;
      }
      if (!skip_value(type, 0)) return fail("bad or truncated GGUF value for '" + key + "'");
    }
    if (!found) {
      if (out.variants.empty()) return fail("GGUF has no tokenizer.chat_template");
      return bad(base::errc::invalid_argument, "GGUF has no chat template named '" + want + "'");
    }
    out.source = std::move(chosen);
    out.name = want;
    auto token_text = [&](std::int64_t id, const char* field) -> base::status {
      if (id < 0 || tokens_at == 0) return {};
      if (static_cast<std::uint64_t>(id) >= tokens_count) return {};
      pos_ = tokens_at;
      std::string s;
      for (std::int64_t k = 0; k <= id; ++k)
        if (!str(s)) return fail("truncated GGUF token list");
      out.special_tokens[field] = s;
      return {};
    };
    if (auto st = token_text(bos_id, "bos_token"); !st) return std::move(st).error();
    if (auto st = token_text(eos_id, "eos_token"); !st) return std::move(st).error();
    return out;
  }

 private:
  std::string_view b_;
  const load_options& opts_;
  std::size_t pos_ = 0;

  std::size_t remaining() const { return b_.size() - pos_; }
  base::error fail(std::string msg) const {
    return bad(base::errc::syntax_error, std::move(msg), {}, pos_);
  }
  template <class T>
  bool num(T& v) {
    if (remaining() < sizeof(T)) return (truncated = true, false);
    T x = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      x |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(b_[pos_ + i])) << (8 * i));
    v = x;
    pos_ += sizeof(T);
    return true;
  }
  bool u32(std::uint32_t& v) { return num(v); }
  bool u64(std::uint64_t& v) { return num(v); }
  bool str(std::string& s, std::size_t max = static_cast<std::size_t>(-1)) {
    std::uint64_t n = 0;
    if (!u64(n) || n > max) return false;
    if (n > remaining()) return (truncated = true, false);
    s.assign(b_.data() + pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  bool skip(std::uint64_t n) {
    if (n > remaining()) return (truncated = true, false);
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  bool skip_value(std::uint32_t type, int depth) {
    switch (type) {
      case 0:
      case 1:
      case 7:
        return skip(1);
      case 2:
      case 3:
        return skip(2);
      case 4:
      case 5:
      case 6:
        return skip(4);
      case 10:
      case 11:
      case 12:
        return skip(8);
      case 8: {
        std::uint64_t n = 0;
        return u64(n) && skip(n);
      }
      case 9: {
        if (depth > 2) return false;
        std::uint32_t et = 0;
        std::uint64_t n = 0;
        if (!u32(et) || !u64(n)) return false;
        if (n > (std::uint64_t{1} << 40)) return false;
        std::size_t fixed = (et == 0 || et == 1 || et == 7)      ? 1
                            : (et == 2 || et == 3)               ? 2
                            : (et == 4 || et == 5 || et == 6)    ? 4
                            : (et == 10 || et == 11 || et == 12) ? 8
                                                                 : 0;
        if (fixed) {
          if (n > remaining() / fixed) return (truncated = true, false);
          return skip(n * fixed);
        }
        for (std::uint64_t i = 0; i < n; ++i)
          if (!skip_value(et, depth + 1)) return false;
        return true;
      }
      default:
        return false;
    }
  }
};

base::result<std::string> read_gguf_header(const std::string& path, const load_options& o) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(base::errc::io_error, "cannot open file", path);
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  // The metadata holds the token list (several MB for big vocabularies); read a growing
  // prefix until the header parses, never more than the file or the config bound.
  std::uint64_t want = std::min<std::uint64_t>(size, 8u << 20);
  std::string buf;
  while (true) {
    buf.resize(static_cast<std::size_t>(want));
    in.seekg(0);
    in.read(buf.data(), static_cast<std::streamsize>(want));
    if (static_cast<std::uint64_t>(in.gcount()) != want)
      return bad(base::errc::io_error, "short read", path);
    gguf_reader probe(buf, o);
    auto r = probe.run();
    if (r || !probe.truncated || want >= size || want >= o.max_config_bytes * 4) return buf;
    want = std::min<std::uint64_t>(size, want * 4);
  }
}

}  // namespace

base::result<template_source> template_from_gguf(std::string_view bytes,
                                                 const load_options& options) {
  gguf_reader r(bytes, options);
  return r.run();
}

base::result<template_source> template_from_tokenizer_config(const json::value& config,
                                                             const load_options& options) {
  if (!config.is_object())
    return bad(base::errc::invalid_argument, "tokenizer_config is not a JSON object");
  std::string want = wanted_name(options);
  template_source out;
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null())
    return bad(base::errc::invalid_argument, "tokenizer_config has no chat_template");
  if (it->is_string()) {
    out.variants.push_back("default");
    if (want != "default")
      return bad(base::errc::invalid_argument, "no chat template named '" + want + "'");
    out.source = it->get<std::string>();
  } else if (it->is_array()) {
    bool found = false;
    for (const auto& e : *it) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
          !e.contains("template") || !e["template"].is_string())
        return bad(base::errc::invalid_argument,
                   "chat_template list entries must be {\"name\", \"template\"} strings");
      std::string name = e["name"].get<std::string>();
      out.variants.push_back(name);
      if (name == want && !found) {
        out.source = e["template"].get<std::string>();
        found = true;
      }
    }
    if (!found) return bad(base::errc::invalid_argument, "no chat template named '" + want + "'");
  } else {
    return bad(base::errc::invalid_argument, "chat_template must be a string or a list");
  }
  if (out.source.size() > options.max_template_bytes)
    return bad(base::errc::limit_exceeded, "chat template too large");
  out.name = want;
  for (const char* field : {"bos_token", "eos_token"}) {
    auto t = config.find(field);
    if (t == config.end()) continue;
    if (t->is_string()) {
      out.special_tokens[field] = *t;
    } else if (t->is_object() && t->contains("content") && (*t)["content"].is_string()) {
      out.special_tokens[field] = (*t)["content"];
    }
  }
  if (auto rt = config.find("response_template"); rt != config.end()) {
    out.response_template = json::dump(*rt);
  } else if (config.contains("response_schema")) {
    out.response_template =
        json::dump(json::value::object({{"response_schema", config["response_schema"]}}));
  }
  return out;
}

base::result<source_kind> source_kind_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(base::errc::io_error, "cannot open file", path);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) return source_kind::gguf;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    return source_kind::tokenizer_config;
  }
  return source_kind::jinja_file;
}

base::result<template_source> load_template_source(const std::string& path,
                                                   const load_options& options) {
  source_kind kind = options.kind;
  if (kind == source_kind::automatic) {
    auto detected = source_kind_of(path);
    if (!detected) return std::move(detected).error();
    kind = *detected;
  }
  if (kind == source_kind::gguf) {
    auto bytes = read_gguf_header(path, options);
    if (!bytes) return std::move(bytes).error();
    auto r = template_from_gguf(*bytes, options);
    if (!r) {
      base::error e = std::move(r).error();
      e.where.file = path;
      return e;
    }
    return r;
  }
  if (kind == source_kind::tokenizer_config) {
    auto text = base::read_file(path, options.max_config_bytes);
    if (!text) return std::move(text).error();
    auto j = json::parse(*text, {.file = path});
    if (!j) return std::move(j).error();
    auto r = template_from_tokenizer_config(*j, options);
    if (!r) {
      base::error e = std::move(r).error();
      e.where.file = path;
      return e;
    }
    return r;
  }
  auto text = base::read_file(path, options.max_template_bytes);
  if (!text) return std::move(text).error();
  template_source out;
  out.source = std::move(*text);
  out.name = "default";
  out.variants.push_back("default");
  if (!options.name.empty() && options.name != "default")
    return bad(base::errc::invalid_argument,
               "a .jinja file has only the default template, not '" + options.name + "'", path);
  return out;
}

}  // namespace chatpeg::jinja
