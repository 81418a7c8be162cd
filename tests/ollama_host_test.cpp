#include <gtest/gtest.h>

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
  };
  for (const auto& [in, out] : cases)
    EXPECT_EQ(clef::ollama_base_url(in), out) << "OLLAMA_HOST=" << in;
}

}  // namespace
