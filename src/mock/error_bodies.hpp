// Internal: each imitated server's error bodies, and the statuses it answers a bad request with.
#pragma once

#include <string>

#include "clef/mock.hpp"
#include "mock/reply.hpp"

namespace clef::mock_detail {

/// `shape`'s error body for `message` at `status`; `code` is the server's own error code where
/// it has one (Workers AI's number, TypeSafe's type, ollaya's code).
Reply error_reply(MockProfile shape, int status, const std::string& message,
                  const std::string& code = "");

/// The status `shape` gives a request its checks refuse (400 or 422).
int invalid_status(MockProfile shape);

/// `shape`'s answer to a body that is not JSON it reads: syntax, depth past max_json_depth.
Reply invalid_json_reply(MockProfile shape, const std::string& why);

}  // namespace clef::mock_detail
