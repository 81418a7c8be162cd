// Internal: what a successful answer looks like on each imitated server — number rounding and
// encoding, confidence formula, probability key order, envelope, request id header, model names.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// A probability as `shape`'s JSON encoder writes it: rounded to its decimals, and 1 and 0 as
/// integers where Go and JS print them so.
Json number_as_sent(MockProfile shape, double value);

/// An answer's confidence by `shape`'s formula: 1 - normalised entropy, or the top probability's
/// lead rescaled to [0, 1].
double confidence(MockProfile shape, const std::vector<double>& p);

/// {key: probability} in `shape`'s key order: Go's sorted map keys (Ollama), most likely first
/// (Laya), else the question's own order.
Json probabilities_object(MockProfile shape, const std::vector<std::string>& keys,
                          const std::vector<double>& p);

/// The 200 body for `answers` of `model`: `shape`'s model name, usage and extra members, and
/// Workers AI's {result, success, errors, messages} envelope.
Json decision_body(MockProfile shape, const std::string& model, Json answers,
                   std::size_t request_bytes);

/// Workers AI's measure of an answer's cost for a request of `request_bytes`, in neurons: the
/// input tokens decision_body reports (a token per 4 bytes) at Clef-Flash's published $0.09 per
/// million, in neurons of $0.011 per 1,000.
double neurons_for(std::size_t request_bytes);

/// neurons_for as Workers AI's cf-ai-neurons header; nothing for the other servers.
std::optional<std::pair<std::string, std::string>> neurons_header(MockProfile shape,
                                                                  std::size_t request_bytes);

/// `shape`'s request id header for request `call`, when it sends one.
std::optional<std::pair<std::string, std::string>> request_id_header(MockProfile shape, int call);

/// Ollama's name for a model: a name without a tag is NAME:latest ("clef" → "clef:latest").
std::string ollama_name(const std::string& name);

/// Whether `a` and `b` name one model on `shape`: Ollama reads an untagged name as NAME:latest,
/// the other servers match names exactly.
bool same_model(MockProfile shape, const std::string& a, const std::string& b);

}  // namespace clef::mock_detail
