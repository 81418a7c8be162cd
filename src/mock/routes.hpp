// Internal: the mock's routes — which path each handler serves, per profile, and the profile's
// error body for what cpp-httplib refuses itself or a handler throws.
#pragma once

namespace clef::mock_detail {

struct ServerState;

/// Registers every route and handler of `state`'s profile on its HTTP server.
void add_routes(ServerState& state);

}  // namespace clef::mock_detail
