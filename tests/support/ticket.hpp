// Test support: the request most tests send — a ticket's text and one yes/no question — so that
// a test names only what it varies.
#pragma once

#include <string>

#include "clef/clef.hpp"

namespace clef::testing {

/// "ticket N", asked whether it is urgent.
inline DecisionRequest ticket(int n) {
  DecisionRequest request;
  request.state = State::text("ticket " + std::to_string(n));
  request.questions = {Question::yes_no("urgent", "Is it urgent?")};
  return request;
}

}  // namespace clef::testing
