// The test suite's fake System One server as a process, for benchmarks and for trying clef by
// hand: prints "listening on http://127.0.0.1:PORT" and serves until stdin closes or SIGTERM.
//
//   fake_systemone_server [--shape ollama|workers_ai|typesafe|llamacpp|laya|ollaya]
//                         [--latency-ms N] [--models a,b] [--rules FILE]
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "fake_server.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) {
  g_stop = 1;
}

}  // namespace

int main(int argc, char** argv) {
  using clef::testing::ServerShape;
  ServerShape shape = ServerShape::ollama;
  long latency_ms = 0;
  std::vector<std::string> models;
  std::vector<clef::testing::AnswerRule> rules;
  const char* usage =
      "usage: fake_systemone_server [--shape ollama|workers_ai|typesafe|llamacpp|laya|ollaya] "
      "[--latency-ms N] [--models a,b] [--rules FILE]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << usage;
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--models") {
      models.clear();
      std::stringstream list(value);
      for (std::string name; std::getline(list, name, ',');) models.push_back(name);
    } else if (flag == "--rules") {
      std::ifstream file(value);
      std::stringstream text;
      text << file.rdbuf();
      std::string problem;
      auto parsed = file ? clef::testing::parse_answer_rules(text.str(), problem) : std::nullopt;
      if (!parsed) {
        std::cerr << value << ": " << (file ? problem : "cannot read it") << "\n";
        return 2;
      }
      rules = std::move(*parsed);
    } else if (flag == "--latency-ms") {
      latency_ms = std::strtol(value.c_str(), nullptr, 10);
    } else if (flag == "--shape") {
      if (value == "ollama")
        shape = ServerShape::ollama;
      else if (value == "workers_ai")
        shape = ServerShape::workers_ai;
      else if (value == "typesafe")
        shape = ServerShape::typesafe;
      else if (value == "llamacpp")
        shape = ServerShape::llamacpp;
      else if (value == "laya")
        shape = ServerShape::laya;
      else if (value == "ollaya")
        shape = ServerShape::ollaya;
      else {
        std::cerr << "unknown shape " << value << "\n";
        return 2;
      }
    } else {
      std::cerr << usage;
      return 2;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  clef::testing::FakeServer server(shape);
  server.set_latency(std::chrono::milliseconds(latency_ms));
  if (!models.empty()) server.set_models(models);
  server.set_rules(std::move(rules));
  std::cout << "listening on " << server.base_url() << std::endl;
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 0;
}
