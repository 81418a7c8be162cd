// Turning validated command-line input into a request and a client, and reporting failures.
#pragma once

#include <string>
#include <vector>

#include "clef/client.hpp"
#include "connection.hpp"
#include "context.hpp"

namespace clef::cli {

/// A request from a state, questions, image paths and a --keep-alive value ("" = none).
Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const std::vector<std::string>& image_paths,
                                      const std::string& keep_alive);

/// The client for these flags. `offline` (dry runs) lets a missing token through, since
/// nothing is sent and the token is never printed.
Result<Client> make_client(const ConnectionFlags& flags, const Context& context, bool offline);

/// Prints `error` as "clef: error: ..." with the next step, and returns its exit code.
int report(const Context& context, const Error& error, const ConnectionFlags& flags);

}  // namespace clef::cli
