// A response as a transport would return it, for tests that inject one.
#pragma once

#include <string>
#include <utility>

#include "clef/transport.hpp"

namespace clef::testing {

inline HttpResponse http_response(int status, std::string body, Headers headers = {}) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  response.headers = std::move(headers);
  return response;
}

}  // namespace clef::testing
