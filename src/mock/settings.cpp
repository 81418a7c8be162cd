// Which models the mock's settings serve, each profile naming models its own way.
#include "mock/settings.hpp"

#include <algorithm>

#include "mock/profile.hpp"

namespace clef::mock_detail {

bool serves(const MockSettings& s, MockProfile shape, const std::string& name) {
  return std::any_of(s.models.begin(), s.models.end(),
                     [&](const std::string& m) { return same_model(shape, m, name); });
}

bool is_other_model(const MockSettings& s, MockProfile shape, const std::string& name) {
  return std::any_of(s.other_models.begin(), s.other_models.end(),
                     [&](const std::string& m) { return same_model(shape, m, name); });
}

}  // namespace clef::mock_detail
