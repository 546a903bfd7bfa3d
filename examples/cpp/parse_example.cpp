// Loads the bundled template once, prepares the bundled request (prompt, grammar, stops),
// parses the bundled output in one go and again as a stream, and checks both agree.
// Usage: parse_example <examples dir>
#include <chatpeg/chatpeg.h>

#include <fstream>
#include <iostream>
#include <sstream>

static std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "examples";
  try {
    auto tmpl = chatpeg::api::chat_template::from_file(dir + "/chatml_tools.jinja");
    auto request = chatpeg::api::json::parse(slurp(dir + "/weather_request.json"));
    const std::string output = slurp(dir + "/weather_output.txt");

    auto prepared = tmpl.prepare(request);
    std::cout << "chatpeg " << CHATPEG_VERSION_STRING << ": prompt " << prepared.prompt.size()
              << " bytes, grammar " << prepared.grammar.size() << " bytes, "
              << prepared.triggers.size() << " trigger(s)\n";

    auto message = tmpl.parse(output, request);
    auto stream = tmpl.stream(request);
    std::size_t deltas = 0;
    for (std::size_t at = 0; at < output.size(); at += 5) {
      deltas += stream.feed(std::string_view(output).substr(at, 5)).size();
    }
    auto done = stream.finish();
    std::cout << deltas + done.deltas.size() << " deltas, finish_reason " << done.finish_reason
              << '\n'
              << message.dump(2) << '\n';
    // Ids are generated per call, so compare the rest.
    for (auto* m : {&message, &done.message}) {
      for (auto& call : (*m)["tool_calls"]) call.erase("id");
    }
    return message == done.message ? 0 : 1;
  } catch (const chatpeg::api::error& e) {
    std::cerr << "chatpeg: " << e.what() << " (" << e.where() << ")\n";
    return 1;
  }
}
