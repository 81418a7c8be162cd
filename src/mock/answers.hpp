// Internal: the mock's simulated model — deterministic answers per (state, question, option),
// shaped, rounded and ordered the way each imitated server sends them.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// 64-bit FNV-1a: the default model's hash, and the fallback digests /api/tags reports.
std::uint64_t fnv1a(const std::string& text);

/// The simulated model's flaws (MockFaults::position_bias and noise) and where request `call`'s
/// noise is drawn from.
struct Flaws {
  double position_bias = 0;
  double noise = 0;
  std::uint64_t seed = 1;
  int call = 0;
};

/// The answer to question `name` (`question`, already checked) about `state` (its JSON text), as
/// `shape` sends it: from `rule` when one matched, else the default model; `flaws` applied.
Json answer_for(MockProfile shape, const std::string& state, const std::string& name,
                const Json& question, const MockRule* rule, const Flaws& flaws = {});

}  // namespace clef::mock_detail
