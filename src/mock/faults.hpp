// Internal: faults on demand — which decision requests fail or drop, drawn from the seed.
// (first_attempt_faults, a script for tests, is declared in clef/mock.hpp.)
#pragma once

#include <cstdint>
#include <optional>

#include "clef/mock.hpp"
#include "mock/reply.hpp"

namespace clef::mock_detail {

/// A uniform draw in [0, 1) for request `call` of a run seeded `seed`, one stream per kind of
/// fault so that drops and failures are independent.
double unit_draw(std::uint64_t seed, int call, std::uint64_t stream);

/// The error `shape` answers decision request `call` with, when `faults` draw one: the
/// daily-allocation 429, or a status of fail_rates (with Retry-After when asked).
std::optional<Reply> drawn_fault(MockProfile shape, const MockFaults& faults, int call);

/// Whether decision request `call`'s connection drops after the headers.
bool drops(const MockFaults& faults, int call);

}  // namespace clef::mock_detail
