// clef-mock (run as `clef mock`): the mock System One server from the shell. Prints its URL on
// stdout's first line, then serves until SIGINT or SIGTERM.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "clef/mock.hpp"
#include "common/files.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) {
  g_stop = 1;
}

/// "503:0.05,429:0.02" → {{503, 0.05}, {429, 0.02}}.
bool parse_fail_rates(const std::string& text, std::vector<std::pair<int, double>>& out) {
  std::stringstream list(text);
  double total = 0;
  for (std::string item; std::getline(list, item, ',');) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) return false;
    try {
      const int status = std::stoi(item.substr(0, colon));
      const double rate = std::stod(item.substr(colon + 1));
      if (status < 400 || status > 599 || !(rate >= 0 && rate <= 1)) return false;
      total += rate;
      out.emplace_back(status, rate);
    } catch (const std::exception&) {
      return false;
    }
  }
  return total <= 1;
}

/// At most `limit` bytes of the file at `path` (parse_mock_rules refuses more than it takes).
bool read_bounded(const std::string& path, std::size_t limit, std::string& text,
                  std::string& problem) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    problem = "cannot read it";
    return false;
  }
  text.resize(limit);
  file.read(text.data(), static_cast<std::streamsize>(limit));
  if (file.bad()) {
    problem = "cannot read it";
    return false;
  }
  text.resize(static_cast<std::size_t>(file.gcount()));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"clef mock: a System One server on 127.0.0.1 for tests and CI", "clef mock"};
  int port = 0;
  std::string profile = "ollama";
  std::string rules_path, cassette_path, log_path, fail_rates;
  std::vector<std::string> models;
  long latency_ms = 0;
  double drop_rate = 0;
  int retry_after = -1;
  bool quota = false;
  std::uint64_t seed = 1;
  std::size_t max_connections = 1024;
  app.add_option("--port", port, "Port on 127.0.0.1 (0: a free one; a port in use: exit 2)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--profile", profile, "The server it imitates")
      ->check(CLI::IsMember({"ollama", "workers-ai", "typesafe", "llamacpp", "laya", "ollaya"}))
      ->capture_default_str();
  app.add_option("--models", models, "Models it serves (default: clef-flash)")->delimiter(',');
  app.add_option("--rules", rules_path, "Answer rules (JSON, see the README)");
  app.add_option("--cassette", cassette_path, "Answer from a --record cassette");
  app.add_option("--latency", latency_ms, "Milliseconds before each answer")
      ->check(CLI::Range(0L, 600000L));
  app.add_option("--fail-rate", fail_rates, "STATUS:SHARE,… of decisions that fail (503:0.05)");
  app.add_option("--drop-rate", drop_rate, "Share of decisions whose connection drops")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--retry-after", retry_after, "Retry-After seconds on 429/503 answers")
      ->check(CLI::Range(0, 86400));
  app.add_flag("--quota-exhausted", quota, "Every decision gets the daily-allocation 429 (4006)");
  app.add_option("--log", log_path, "Append each request as a JSON line to FILE");
  app.add_option("--max-connections", max_connections,
                 "Connections served at once, each on its own thread; more wait")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--seed", seed, "Seed of the fault draws")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const clef::MockProfile shape = profile == "workers-ai" ? clef::MockProfile::workers_ai
                                  : profile == "typesafe" ? clef::MockProfile::typesafe
                                  : profile == "llamacpp" ? clef::MockProfile::llamacpp
                                  : profile == "laya"     ? clef::MockProfile::laya
                                  : profile == "ollaya"   ? clef::MockProfile::ollaya
                                                          : clef::MockProfile::ollama;
  clef::MockFaults faults;
  faults.drop_rate = drop_rate;
  faults.quota_exhausted = quota;
  faults.seed = seed;
  if (retry_after >= 0) faults.retry_after_seconds = retry_after;
  if (!fail_rates.empty() && !parse_fail_rates(fail_rates, faults.fail_rates)) {
    std::cerr << "clef mock: error: --fail-rate is STATUS:SHARE,… with shares summing to at most 1"
              << " (503:0.05,429:0.02)\n";
    return 2;
  }
  std::vector<clef::MockRule> rules;
  if (!rules_path.empty()) {
    std::string text, problem;
    auto parsed = read_bounded(rules_path, clef::max_mock_rules_bytes + 1, text, problem)
                      ? clef::parse_mock_rules(text, problem)
                      : std::nullopt;
    if (!parsed) {
      std::cerr << "clef mock: error: " << rules_path << ": " << problem << "\n";
      return 2;
    }
    rules = std::move(*parsed);
  }
  // Bodies of up to 64 MiB are read on many threads: with glibc's sliding mmap threshold, freed
  // ones stay in per-thread arenas (eight 50 MB bodies left 220 MB resident). A fixed threshold
  // keeps large buffers in mmap, returned to the system as soon as each request is answered.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    clef::MockServer server(shape, port);
    // A server that runs for a whole CI job keeps nothing per request: --log is the record.
    server.set_request_log_limit(0);
    server.set_latency(std::chrono::milliseconds(latency_ms));
    server.set_max_connections(max_connections);
    clef::cli::raise_open_file_limit(max_connections);
    if (!models.empty()) server.set_models(models);
    server.set_rules(std::move(rules));
    server.set_faults(faults);
    std::string problem;
    if (!cassette_path.empty() && !server.set_cassette(cassette_path, problem)) {
      std::cerr << "clef mock: error: " << problem << "\n";
      return 2;
    }
    if (!log_path.empty() && !server.set_log(log_path)) {
      std::cerr << "clef mock: error: cannot open " << log_path << "\n";
      return 2;
    }
    std::cout << server.base_url() << std::endl;
    std::cerr << "clef mock: " << profile << " on " << server.base_url() << " (SIGINT to stop)\n";
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } catch (const std::exception& e) {
    std::cerr << "clef mock: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
