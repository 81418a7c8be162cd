// Replaying a cassette's recorded answer as the mock's own, without its framing headers.
#include "mock/cassette_replay.hpp"

#include <strings.h>

#include "mock/error_bodies.hpp"

namespace clef::mock_detail {
namespace {

/// Response headers a cassette may have recorded that describe the recorded connection and
/// framing, not the answer: sent again beside the mock's own, they make malformed HTTP (two
/// Content-Lengths, a chunked header on a body that is not).
bool is_framing_header(const std::string& name) {
  static const char* const framing[] = {"content-length", "transfer-encoding", "connection",
                                        "keep-alive",     "proxy-connection",  "te",
                                        "trailer",        "upgrade",           "content-encoding"};
  for (const char* f : framing) {
    if (strcasecmp(name.c_str(), f) == 0) return true;
  }
  return false;
}

}  // namespace

bool replay(MockProfile shape, Transport& cassette, const std::string& path,
            const std::string& body, httplib::Response& res) {
  HttpRequest asked;
  asked.url = "http://mock" + path;
  asked.body = body;
  auto hit = cassette.send(asked);
  if (!hit) return false;
  if (hit->status < 200 || hit->status > 599) {
    send(res, error_reply(shape, 500,
                          "the cassette's recorded status " + std::to_string(hit->status) +
                              " is not an HTTP answer"));
    return true;
  }
  res.status = hit->status;
  std::string type = "application/json";
  for (const auto& [name, value] : hit->headers) {
    if (strcasecmp(name.c_str(), "content-type") == 0)
      type = value;
    else if (!is_framing_header(name))
      res.set_header(name, value);
  }
  res.set_content(hit->body, type);
  return true;
}

}  // namespace clef::mock_detail
