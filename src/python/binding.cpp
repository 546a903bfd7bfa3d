// chatpeg._chatpeg: the Python extension over the C++ API (chatpeg/api/template.h). Requests
// and results cross as JSON text through Python's json module, so dicts keep their key order
// and every JSON value maps to its Python type; the GIL is released while chatpeg renders,
// prepares, parses or streams. api::error becomes the chatpeg.Error subclass for its code
// (chatpeg/_errors.py), with .code, .where and .offset.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chatpeg/chatpeg.h"

namespace py = pybind11;
using chatpeg::api::json;

namespace {

json to_json(const py::handle& obj) {
  const std::string text = py::module_::import("json")
                               .attr("dumps")(obj, py::arg("allow_nan") = false)
                               .cast<std::string>();
  return json::parse(text);
}

py::object from_json(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return py::module_::import("json").attr("loads")(py::str(text));
}

// str → its UTF-8; bytes → as is (a piece of output may end inside a UTF-8 sequence).
std::string text_of(const py::handle& obj) {
  if (py::isinstance<py::bytes>(obj)) return obj.cast<std::string>();
  return obj.cast<py::str>().cast<std::string>();
}

chatpeg::api::load_options load_options_of(std::optional<std::string> name,
                                           std::optional<std::string> bos,
                                           std::optional<std::string> eos) {
  chatpeg::api::load_options o;
  if (name) o.name = std::move(*name);
  o.bos_token = std::move(bos);
  o.eos_token = std::move(eos);
  return o;
}

chatpeg::api::response_parse_options response_options_of(std::optional<std::string> prefix,
                                                         const py::object& tools) {
  chatpeg::api::response_parse_options o;
  if (prefix) o.prefix = std::move(*prefix);
  if (!tools.is_none()) o.tools = to_json(tools);
  return o;
}

template <class F>
auto without_gil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

// api::error → the chatpeg.Error subclass for its code.
void register_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const chatpeg::api::error& e) {
      py::object make = py::module_::import("chatpeg._errors").attr("make_error");
      py::object offset = e.offset() == chatpeg::api::error::no_offset
                              ? py::object(py::none())
                              : py::object(py::int_(e.offset()));
      py::object exc = make(std::string(chatpeg::api::error_code_name(e.code())),
                            std::string(e.what()), e.where(), offset);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

void bind_stream(py::module_& m) {
  using chatpeg::api::response_stream;
  py::class_<response_stream>(m, "Stream")
      .def(
          "feed",
          [](response_stream& s, const py::object& text,
             std::optional<std::vector<std::int32_t>> token_ids) {
            const std::string piece = text_of(text);
            const std::vector<std::int32_t> ids = token_ids.value_or(std::vector<std::int32_t>{});
            json deltas = without_gil([&] { return s.feed(piece, ids); });
            return from_json(deltas);
          },
          py::arg("text"), py::arg("token_ids") = py::none())
      .def(
          "finish",
          [](response_stream& s, bool hit_token_limit) {
            auto done = without_gil([&] { return s.finish(hit_token_limit); });
            json j = json::object();
            j["deltas"] = std::move(done.deltas);
            j["message"] = std::move(done.message);
            j["finish_reason"] = done.finish_reason;
            return from_json(j);
          },
          py::arg("hit_token_limit") = false)
      .def_property_readonly("message",
                             [](const response_stream& s) { return from_json(s.current()); })
      .def_property_readonly("received", &response_stream::received);
}

void bind_template(py::module_& m) {
  using chatpeg::api::chat_template;
  py::class_<chat_template>(m, "Template")
      .def_static(
          "from_file",
          [](const std::string& path, std::optional<std::string> name,
             std::optional<std::string> bos_token, std::optional<std::string> eos_token) {
            auto o = load_options_of(std::move(name), std::move(bos_token), std::move(eos_token));
            return without_gil([&] { return chat_template::from_file(path, o); });
          },
          py::arg("path"), py::kw_only(), py::arg("name") = py::none(),
          py::arg("bos_token") = py::none(), py::arg("eos_token") = py::none())
      .def_static(
          "from_string",
          [](std::string source, std::optional<std::string> bos_token,
             std::optional<std::string> eos_token) {
            auto o = load_options_of(std::nullopt, std::move(bos_token), std::move(eos_token));
            return without_gil([&] { return chat_template::from_string(std::move(source), o); });
          },
          py::arg("source"), py::kw_only(), py::arg("bos_token") = py::none(),
          py::arg("eos_token") = py::none())
      .def_static(
          "from_tokenizer_config",
          [](const py::object& config, std::optional<std::string> name) {
            const json j = to_json(config);
            auto o = load_options_of(std::move(name), std::nullopt, std::nullopt);
            return without_gil([&] { return chat_template::from_tokenizer_config(j, o); });
          },
          py::arg("config"), py::kw_only(), py::arg("name") = py::none())
      .def_property_readonly("analysis",
                             [](const chat_template& t) { return from_json(t.analysis()); })
      .def(
          "render",
          [](const chat_template& t, const py::object& request) {
            const json req = to_json(request);
            return without_gil([&] { return t.render(req); });
          },
          py::arg("request"))
      .def(
          "prepare",
          [](const chat_template& t, const py::object& request) {
            const json req = to_json(request);
            json out = without_gil([&] { return t.prepare(req).to_json(); });
            return from_json(out);
          },
          py::arg("request"))
      .def(
          "parse",
          [](const chat_template& t, const py::object& output, const py::object& request) {
            const std::string text = text_of(output);
            const json req = to_json(request);
            json msg = without_gil([&] { return t.parse(text, req); });
            return from_json(msg);
          },
          py::arg("output"), py::arg("request"))
      .def(
          "stream",
          [](const chat_template& t, const py::object& request,
             std::optional<std::vector<std::pair<std::string, std::int32_t>>> special_tokens) {
            const json req = to_json(request);
            chatpeg::api::stream_options o;
            if (special_tokens) o.special_tokens = std::move(*special_tokens);
            return without_gil([&] { return t.stream(req, o); });
          },
          py::arg("request"), py::kw_only(), py::arg("special_tokens") = py::none())
      .def("write_response_template",
           [](const chat_template& t) {
             json j = without_gil([&] { return t.write_response_template(); });
             return from_json(j);
           })
      .def_property_readonly("shipped_response_template", [](const chat_template& t) {
        return without_gil([&] { return t.shipped_response_template(); });
      });
}

void bind_response_template(py::module_& m) {
  using chatpeg::api::response_template;
  py::class_<response_template>(m, "ResponseTemplate")
      .def_static(
          "from_file",
          [](const std::string& path) {
            return without_gil([&] { return response_template::from_file(path); });
          },
          py::arg("path"))
      .def_static(
          "from_dict",
          [](const py::object& template_or_config) {
            const json j = to_json(template_or_config);
            return without_gil([&] { return response_template::from_json(j); });
          },
          py::arg("template_or_config"))
      .def_property_readonly("source",
                             [](const response_template& t) { return from_json(t.source()); })
      .def(
          "parse",
          [](const response_template& t, const py::object& output,
             std::optional<std::string> prefix, const py::object& tools, bool message) {
            const std::string text = text_of(output);
            auto o = response_options_of(std::move(prefix), tools);
            json out =
                without_gil([&] { return message ? t.parse_message(text, o) : t.parse(text, o); });
            return from_json(out);
          },
          py::arg("output"), py::kw_only(), py::arg("prefix") = py::none(),
          py::arg("tools") = py::none(), py::arg("message") = false)
      .def(
          "stream",
          [](const response_template& t, std::optional<std::string> prefix,
             const py::object& tools) {
            auto o = response_options_of(std::move(prefix), tools);
            return without_gil([&] { return t.stream(o); });
          },
          py::kw_only(), py::arg("prefix") = py::none(), py::arg("tools") = py::none());
}

}  // namespace

PYBIND11_MODULE(_chatpeg, m) {
  m.doc() = "chatpeg native extension (use the chatpeg package)";
  m.attr("__version__") = CHATPEG_VERSION_STRING;
  register_errors();
  bind_stream(m);
  bind_template(m);
  bind_response_template(m);
}
