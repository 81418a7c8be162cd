// clef-mock (run as `clef mock`): the mock System One server from the shell. Prints its URL on
// stdout's first line, then serves until SIGINT or SIGTERM.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "clef/mock.hpp"
#include "common/files.hpp"
#include "common/flag_rules.hpp"
#include "common/input_file.hpp"
#include "common/mock_flags.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) {
  g_stop = 1;
}

clef::MockProfile profile_named(const std::string& name) {
  return name == "workers-ai" ? clef::MockProfile::workers_ai
         : name == "typesafe" ? clef::MockProfile::typesafe
         : name == "llamacpp" ? clef::MockProfile::llamacpp
         : name == "laya"     ? clef::MockProfile::laya
         : name == "ollaya"   ? clef::MockProfile::ollaya
         : name == "openai"   ? clef::MockProfile::openai
                              : clef::MockProfile::ollama;
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

/// The faults the flags ask for; false (having said why) when --fail-rate is malformed.
bool faults_from(const clef::cli::MockFlags& flags, clef::MockFaults& faults) {
  faults.drop_rate = flags.drop_rate;
  faults.quota_exhausted = flags.quota;
  faults.seed = flags.seed;
  faults.capacity = flags.capacity;
  faults.rate_limit = flags.rate_limit;
  faults.spend_limit_usd = flags.spend_limit;
  faults.position_bias = flags.position_bias;
  faults.noise = flags.noise;
  if (flags.spend_limit && flags.profile != "workers-ai") {
    std::cerr << "clef mock: error: --spend-limit: only the workers-ai profile measures what a "
                 "decision costs (cf-ai-neurons)\n";
    return false;
  }
  if (flags.retry_after >= 0) faults.retry_after_seconds = flags.retry_after;
  if (!flags.fail_rates.empty() && !parse_fail_rates(flags.fail_rates, faults.fail_rates)) {
    std::cerr << "clef mock: error: --fail-rate is STATUS:SHARE,… with shares summing to at most 1"
              << " (503:0.05,429:0.02)\n";
    return false;
  }
  return true;
}

/// At most `limit` bytes of the file at `path` (parse_mock_rules refuses more than it takes).
bool read_bounded(const std::string& path, std::size_t limit, std::string& text) {
  if (clef::cli::path_kind(path) != clef::cli::PathKind::regular) return false;
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  text.resize(limit);
  file.read(text.data(), static_cast<std::streamsize>(limit));
  if (file.bad()) return false;
  text.resize(static_cast<std::size_t>(file.gcount()));
  return true;
}

/// A rules file's fault as one line: "rules[3]: …" for a rule, "… (byte 17)" for broken JSON.
std::string rules_problem(const clef::Error& error) {
  if (error.where.rfind("rules[", 0) == 0) return error.where + ": " + error.message;
  return error.where.empty() ? error.message : error.message + " (" + error.where + ")";
}

/// The rules of --rules (none without it); false (having said why) when they cannot be read.
bool rules_from(const clef::cli::MockFlags& flags, std::vector<clef::MockRule>& rules) {
  if (flags.rules_path.empty()) return true;
  std::string text;
  const clef::cli::PathKind kind = clef::cli::path_kind(flags.rules_path);
  const int why = errno;  // path_kind's, when there is nothing to look at
  std::string problem = kind == clef::cli::PathKind::regular ? "cannot read it"
                        : kind == clef::cli::PathKind::missing
                            ? "cannot read it: " + clef::cli::system_reason(why)
                            : "cannot read it: a rules file is a file, not a directory, FIFO or "
                              "device";
  if (read_bounded(flags.rules_path, clef::max_mock_rules_bytes + 1, text)) {
    auto parsed = clef::parse_mock_rules(text);
    if (parsed) {
      rules = std::move(parsed).value();
      return true;
    }
    problem = rules_problem(parsed.error());
  }
  std::cerr << "clef mock: error: " << flags.rules_path << ": " << problem << "\n";
  return false;
}

/// `server` set up as the flags say; false (having said why) when a file cannot be used.
bool configure(clef::MockServer& server, const clef::cli::MockFlags& flags,
               std::vector<clef::MockRule> rules, const clef::MockFaults& faults) {
  if (auto token = server.set_token(flags.token); !token) {
    std::cerr << "clef mock: error: --token: " << token.error().message
              << " (--profile workers-ai)\n";
    return false;
  }
  // A server that runs for a whole CI job keeps nothing per request: --log is the record.
  server.set_request_log_limit(0);
  server.set_latency(std::chrono::milliseconds(flags.latency_ms));
  server.set_max_connections(flags.max_connections);
  clef::cli::raise_open_file_limit(flags.max_connections);
  if (!flags.models.empty()) server.set_models(flags.models);
  if (!flags.gateway.empty()) server.set_gateway(flags.gateway);
  if (flags.gateway_token && flags.profile != "workers-ai") {
    std::cerr << "clef mock: error: --gateway-token: AI Gateway is in front of Workers AI "
                 "(--profile workers-ai)\n";
    return false;
  }
  if (flags.gateway_token) server.set_gateway_token(flags.gateway_token);
  server.set_rules(std::move(rules));
  server.set_faults(faults);
  if (!flags.cassette_path.empty()) {
    if (auto cassette = server.set_cassette(flags.cassette_path); !cassette) {
      std::cerr << "clef mock: error: " << cassette.error().to_string() << "\n";
      return false;
    }
  }
  if (!flags.log_path.empty()) {
    // A FIFO would hold the open until a reader came, with SIGINT waited for elsewhere.
    if (clef::cli::path_kind(flags.log_path) == clef::cli::PathKind::stream &&
        flags.log_path.rfind("/dev/", 0) != 0) {
      std::cerr << "clef mock: error: --log " << flags.log_path
                << " is a FIFO or socket: give a file (or a device such as /dev/stderr)\n";
      return false;
    }
    if (auto log = server.set_log(flags.log_path); !log) {
      std::cerr << "clef mock: error: " << log.error().message << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{clef::cli::mock_description, "clef mock"};
  clef::cli::MockFlags flags;
  clef::cli::declare_mock_flags(app, flags);
  try {
    clef::cli::refuse_empty_equals(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  clef::MockFaults faults;
  std::vector<clef::MockRule> rules;
  if (!faults_from(flags, faults) || !rules_from(flags, rules)) return 2;
  // Bodies of up to 64 MiB are read on many threads: with glibc's sliding mmap threshold, freed
  // ones stay in per-thread arenas (eight 50 MB bodies left 220 MB resident). A fixed threshold
  // keeps large buffers in mmap, returned to the system as soon as each request is answered.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  auto server = clef::MockServer::start(profile_named(flags.profile), flags.port);
  if (!server) {
    std::cerr << "clef mock: error: " << server.error().message << "\n";
    return 2;
  }
  if (!configure(*server, flags, std::move(rules), faults)) return 2;
  std::cout << server->base_url() << std::endl;
  std::cerr << "clef mock: " << flags.profile << " on " << server->base_url()
            << " (SIGINT to stop)\n";
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 0;
}
