// Internal: the simulated server's answer to a decision request — its refusals (route, token,
// model, body checks) in the imitated server's words, else its answers in its shape.
#pragma once

#include <cstddef>

#include "clef/mock.hpp"
#include "mock/reply.hpp"
#include "mock/request_body.hpp"
#include "mock/settings.hpp"

namespace clef::mock_detail {

/// What `shape` answers `request` (whose body, `body_bytes` long, is `decoded`) with settings
/// `s`: an error body when the server would refuse it, else the decision (its noise drawn for
/// request number `call`).
Reply simulate(MockProfile shape, const MockSettings& s, const MockRequest& request,
               std::size_t body_bytes, const Decoded& decoded, int call);

}  // namespace clef::mock_detail
