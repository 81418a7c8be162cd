// The flags of `clef mock` (the clef-mock executable), declared once: for clef-mock itself and
// for its man page, which clef_man_pages writes from the same definitions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clef::cli {

inline constexpr const char* mock_description =
    "clef mock: a System One server on 127.0.0.1 for tests and CI";

/// Every flag of `clef mock`, as given.
struct MockFlags {
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
  std::size_t capacity = 0;
  double rate_limit = 0;
  std::optional<double> spend_limit;         ///< --spend-limit USD (workers-ai).
  double position_bias = 0;                  ///< --position-bias: toward the first option
  double noise = 0;                          ///< --noise: per-request jitter of probabilities
  std::optional<std::string> token;          ///< --token: the one Bearer token workers-ai accepts
  std::string gateway;                       ///< --gateway: workers-ai's AI Gateway name
  std::optional<std::string> gateway_token;  ///< --gateway-token: an Authenticated Gateway
};

/// Declares every flag of `clef mock` on `app`, bound to `flags`, and its examples (the footer).
void declare_mock_flags(CLI::App& app, MockFlags& flags);

}  // namespace clef::cli
