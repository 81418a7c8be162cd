// Internal: answering a decision from a cassette — the recorded status, body and headers, less
// the recorded connection's framing.
#pragma once

#include <string>

#include <httplib.h>

#include "clef/mock.hpp"
#include "clef/transport.hpp"

namespace clef::mock_detail {

/// Writes `cassette`'s recorded answer to the request at `path` with `body` into `res`; false
/// when it has none. A recorded status outside 200-599 is answered with `shape`'s 500.
bool replay(MockProfile shape, Transport& cassette, const std::string& path,
            const std::string& body, httplib::Response& res);

}  // namespace clef::mock_detail
