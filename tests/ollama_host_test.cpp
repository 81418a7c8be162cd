// URLs from the environment: OLLAMA_HOST read as Ollama reads it, credentials in a URL, the proxy
// variables, and keep-alive durations.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "clef/client.hpp"

namespace {

TEST(OllamaHost, ReadLikeOllamasOwnTools) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "http://127.0.0.1:11434"},
      {"   ", "http://127.0.0.1:11434"},
      {"1.2.3.4", "http://1.2.3.4:11434"},
      {":56789", "http://127.0.0.1:56789"},
      {"example.com", "http://example.com:11434"},
      {"example.com:8080", "http://example.com:8080"},
      {"http://example.com", "http://example.com:80"},
      {"https://example.com", "https://example.com:443"},
      {"\"http://10.0.0.1:1234\"", "http://10.0.0.1:1234"},
      {" 'localhost:9999' ", "http://localhost:9999"},
      {"http://example.com/ollama/", "http://example.com:80/ollama"},
      {"0.0.0.0", "http://127.0.0.1:11434"},
      {"0.0.0.0:5000", "http://127.0.0.1:5000"},
      {"[::]:5000", "http://[::1]:5000"},
      {"[::1]:8080", "http://[::1]:8080"},
      {"[fe80::1]", "http://[fe80::1]:11434"},
      {"example.com:99999", "http://127.0.0.1:11434"},
      // Basic auth in front of a remote Ollama: the userinfo is kept, the host read after it.
      {"http://alice:S3cretPW@gpu.example.com:8080", "http://alice:S3cretPW@gpu.example.com:8080"},
      {"alice:pw@10.0.0.5", "http://alice:pw@10.0.0.5:11434"},
      {"https://a:p@ss@[::1]:9/x", "https://a:p@ss@[::1]:9/x"},
  };
  for (const auto& [in, out] : cases)
    EXPECT_EQ(clef::ollama_base_url(in), out) << "OLLAMA_HOST=" << in;
}

TEST(UrlCredentials, ReadFromTheAuthorityOnlyAndPercentDecoded) {
  auto c = clef::url_credentials("http://alice:S3cret%40PW@host:80/p@th");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->password, "S3cret@PW");
  auto raw_at = clef::url_credentials("http://a:p@ss@host");  // the last '@' ends the userinfo
  ASSERT_TRUE(raw_at);
  EXPECT_EQ(raw_at->password, "p@ss");
  EXPECT_FALSE(clef::url_credentials("http://host:80/p@th"));
  EXPECT_FALSE(clef::url_credentials("http://host/?q=a@b"));
  EXPECT_EQ(clef::url_without_credentials("http://alice:pw@host:80/v1"), "http://host:80/v1");
  EXPECT_EQ(clef::url_without_credentials("http://host:80/p@th"), "http://host:80/p@th");
  EXPECT_EQ(clef::url_without_credentials("alice:pw@host"), "host");
}

/// Sets the proxy variables for one test and restores the environment after it.
class ProxyEnvironment {
 public:
  using Values = std::vector<std::pair<const char*, const char*>>;
  explicit ProxyEnvironment(const Values& values) {
    for (const char* name : names) {
      const char* old = std::getenv(name);
      m_saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(name);
    }
    for (const auto& [name, value] : values) ::setenv(name, value, 1);
  }
  ~ProxyEnvironment() {
    for (const auto& [name, value] : m_saved) {
      if (value)
        ::setenv(name, value->c_str(), 1);
      else
        ::unsetenv(name);
    }
  }

 private:
  static constexpr const char* names[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                                          "all_proxy",  "ALL_PROXY",  "no_proxy",    "NO_PROXY"};
  std::vector<std::pair<const char*, std::optional<std::string>>> m_saved;
};

std::string route(const std::string& url, std::optional<std::string> asked = std::nullopt) {
  clef::HttpRequest request;
  request.url = url;
  request.proxy = std::move(asked);
  auto found = clef::proxy_route(request);
  return found ? found->url + " from " + found->source : "direct";
}

TEST(ProxyRoute, LoopbackHostsAreNeverProxiedFromTheEnvironment) {
  // Issue 15, item 25: as Go's ProxyFromEnvironment (Ollama's CLI) does.
  ProxyEnvironment env(ProxyEnvironment::Values{{"http_proxy", "http://proxy:3128"},
                                                {"https_proxy", "http://sp:3128"}});
  for (const char* url :
       {"http://127.0.0.1:11434/v1/systemone", "http://localhost:11434", "http://LOCALHOST.:1",
        "http://127.3.4.5:80", "http://[::1]:11434/api/tags", "http://[::ffff:127.0.0.1]:1"})
    EXPECT_EQ(route(url), "direct") << url;
  EXPECT_EQ(route("http://gpu.example.com:11434"), "http://proxy:3128 from http_proxy");
  EXPECT_EQ(route("https://api.cloudflare.com/client/v4"), "http://sp:3128 from https_proxy");
  EXPECT_EQ(route("http://128.0.0.1"), "http://proxy:3128 from http_proxy");
  // Asked for: a proxy for loopback too; "" for none at all.
  EXPECT_EQ(route("http://127.0.0.1:1", "http://p:1"), "http://p:1 from the request");
  EXPECT_EQ(route("http://gpu.example.com", ""), "direct");
}

TEST(ProxyRoute, ReadsTheVariablesAsCurlDoes) {
  {
    ProxyEnvironment env(
        ProxyEnvironment::Values{{"HTTP_PROXY", "http://cgi:1"}});  // httpoxy: never read
    EXPECT_EQ(route("http://example.com"), "direct");
  }
  {
    ProxyEnvironment env(
        ProxyEnvironment::Values{{"HTTPS_PROXY", "http://up:1"}, {"ALL_PROXY", "http://all:1"}});
    EXPECT_EQ(route("https://example.com"), "http://up:1 from HTTPS_PROXY");
    EXPECT_EQ(route("http://example.com"), "http://all:1 from ALL_PROXY");
  }
  {
    ProxyEnvironment env(
        ProxyEnvironment::Values{{"all_proxy", "http://all:1"},
                                 {"no_proxy", "internal.example, .corp, 10.0.0.0/8,[fd00::1]"}});
    EXPECT_EQ(route("http://internal.example:1"), "direct");
    EXPECT_EQ(route("http://a.internal.example"), "direct");
    EXPECT_EQ(route("http://xinternal.example"), "http://all:1 from all_proxy");
    EXPECT_EQ(route("http://gpu.corp"), "direct");
    EXPECT_EQ(route("http://10.1.2.3:11434"), "direct");
    EXPECT_EQ(route("http://11.1.2.3"), "http://all:1 from all_proxy");
    EXPECT_EQ(route("http://[fd00::1]:1"), "direct");
  }
  {
    ProxyEnvironment env(ProxyEnvironment::Values{{"http_proxy", "http://p:1"}, {"NO_PROXY", "*"}});
    EXPECT_EQ(route("http://example.com"), "direct");
  }
}

TEST(KeepAliveText, LongOrHostileValuesAreRefusedInLinearTime) {
  EXPECT_TRUE(clef::KeepAlive::parse("1h30m").ok());
  EXPECT_TRUE(clef::KeepAlive::parse("-1m").ok());
  EXPECT_TRUE(clef::KeepAlive::parse(".5s").ok());
  EXPECT_TRUE(clef::KeepAlive::parse("5.ms").ok());
  EXPECT_TRUE(clef::KeepAlive::parse("3\xC2\xB5s").ok());
  EXPECT_TRUE(clef::KeepAlive::parse("-300").ok());
  for (const char* bad : {"", "-", "m", "5 m", "1h30", ".s", "5mm", "+-5m", "5M"})
    EXPECT_FALSE(clef::KeepAlive::parse(bad).ok()) << bad;
  // libstdc++'s std::regex recursed once per character here: a long value overflowed the stack.
  EXPECT_FALSE(clef::KeepAlive::parse(std::string(1'000'000, '1') + "x").ok());
  EXPECT_FALSE(clef::KeepAlive::parse(std::string(200'000, '5') + "m").ok());
}

}  // namespace
