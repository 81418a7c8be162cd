// Internal: a decision request from arrival to answer — logged, then answered by the test's
// script, a drawn fault, the cassette or the simulated server, in that order.
#pragma once

#include <httplib.h>

namespace clef::mock_detail {

struct ServerState;

/// POST /v1/systemone (and Workers AI's route) on `state`'s server.
void serve_decision(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace clef::mock_detail
