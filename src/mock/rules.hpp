// Internal: which rule answers a question — the first whose model, question and pattern match.
// (parse_mock_rules, which reads a rules file, is declared in clef/mock.hpp.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clef/mock.hpp"
#include "mock/request_body.hpp"

namespace clef::mock_detail {

/// The first rule for this model and question whose pattern occurs in the state, or nullptr.
const MockRule* rule_for(const std::vector<MockRule>& rules, const std::string& model,
                         const std::string& question, const std::string& state);

/// The work the rules for this request's questions would cost at most (see max_mock_rule_work).
std::uint64_t rule_work(const std::vector<MockRule>& rules, const Decoded& decoded);

/// True when a rule answers some question of this request: rules come before a cassette.
bool any_rule_covers(const std::vector<MockRule>& rules, const Decoded& decoded);

}  // namespace clef::mock_detail
