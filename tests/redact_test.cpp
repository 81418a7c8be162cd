// What a request's credentials are, as the cassette and the cache scrub them from what they keep
// (util/redact.hpp): every header whose name holds authorization, key, token or secret in any case,
// with and without its scheme, and a URL's userinfo — and nothing from the other headers.
#include <gtest/gtest.h>

#include <string>

#include "util/redact.hpp"

namespace {

TEST(RequestCredentials, EveryCredentialHeaderInAnyCaseAndTheUrlsUserinfo) {
  clef::HttpRequest request;
  request.url = "http://someone:pa55word@127.0.0.1:11434/v1/systemone?key=not-a-header";
  request.headers = {
      {"Content-Type", "application/json"}, {"User-Agent", "clef/1 token-less"},
      {"AUTHORIZATION", "Bearer tok-one"},  {"x-API-Key", "key-two"},
      {"X-Auth-ToKen", "tok-three"},        {"cf-aig-authorization", "Bearer tok-four"},
      {"X-Client-Secret", "sec-five"}};
  const auto secrets = clef::detail::request_credentials(request);
  const std::string text =
      "Bearer tok-one tok-one key-two tok-three tok-four sec-five someone:pa55word pa55word "
      "application/json clef/1 token-less";
  EXPECT_EQ(clef::detail::redact_all(text, secrets),
            "<redacted> <redacted> <redacted> <redacted> <redacted> <redacted> <redacted> "
            "<redacted> application/json clef/1 token-less");
  clef::HttpRequest plain;
  plain.url = "http://127.0.0.1:11434/v1/systemone";
  plain.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  EXPECT_TRUE(clef::detail::request_credentials(plain).empty());
}

}  // namespace
