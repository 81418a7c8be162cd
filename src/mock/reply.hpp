// Internal: the answers the mock builds, and how each is written into a cpp-httplib response.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// An answer the mock builds: a status, a JSON body and extra headers.
struct Reply {
  int status = 200;
  Json body;
  std::vector<std::pair<std::string, std::string>> headers;
};

/// `reply` as compact JSON ("application/json; charset=utf-8").
void send(httplib::Response& res, const Reply& reply);

/// A test's scripted reply, after its delay: whole, or cut short at its `truncate_at` byte with
/// the connection closed.
void send_scripted(httplib::Response& res, const MockReply& reply);

/// Headers announcing a body, then the connection closes with none of it sent.
void send_headers_then_drop(httplib::Response& res);

}  // namespace clef::mock_detail
