// Server URLs as people write them: what cannot be read as written is refused (never sent to
// the default port), one server is one server however it is spelled, and a password in a URL
// reaches no output even when the server echoes the header that carries it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "clef/backend.hpp"
#include "clef/client.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::write_temp_file;

/// Values that are almost a URL: each must be refused, never read as the default host.
const std::vector<std::string> unreadable = {
    "http://127.0.0.1:8000]",
    "http://[::1:8000",
    "127.0.0.1:8000]",
    "http://[::1]8000",
    "[127.0.0.1]:8000",
    "http://host:0",
    "http://host:65536",
    "http://host:80a",
    "http://ho st:80",
    "ftp://host:21",
    "http://host:",
    "http://h]ost",
    "http://hö.example",
    "http://host?x=1",
    "http://host#top",
    "::1::8000",
    "http://a,b:80",
    "http://[fe80::1%25eth0]:80",
    // From the outside hostile pass: a ':' left out, a scheme alone, a backslash.
    "http//127.0.0.1:8000",
    "http",
    "https",
    "HTTP",
    "http://127.0.0.1\\@x:80",
    "http://h/a//b",
};

TEST(HostUrl, WhatCannotBeReadAsWrittenIsRefusedNotSentToTheDefaultHost) {
  for (const std::string& value : unreadable) {
    auto read = clef::read_ollama_host(value);
    EXPECT_FALSE(read) << value << " read as " << (read ? read.value() : "");
    if (!read) {
      EXPECT_EQ(read.error().where, "OLLAMA_HOST");
    }
    EXPECT_FALSE(clef::check_server_url(value)) << value;
    // What Ollama's own tools connect to stays available, and says so in its name.
    EXPECT_EQ(clef::ollama_base_url(value), "http://127.0.0.1:11434") << value;
  }
  // The readable forms still read as Ollama reads them.
  EXPECT_EQ(clef::read_ollama_host("HTTP://Example.com").value(), "http://Example.com:80");
  EXPECT_EQ(clef::read_ollama_host("[::]:5000").value(), "http://[::1]:5000");
  EXPECT_EQ(clef::read_ollama_host("::1").value(), "http://[::1]:11434");
  EXPECT_EQ(clef::read_ollama_host(":56789").value(), "http://127.0.0.1:56789");
}

TEST(HostUrl, AnUnreadableOllamaHostIsRefusedByTheLibraryAndTheCommand) {
  FakeServer server;  // on 127.0.0.1: the default host must not be what answers
  ::setenv("OLLAMA_HOST", "http://127.0.0.1:8000]", 1);
  const clef::ClientOptions options = clef::ClientOptions::from_environment(clef::Backend::ollama);
  auto client = clef::Client::create(options);
  auto run = run_clef({"ask", "hello", "--yes-no", "u: U?"});
  ::unsetenv("OLLAMA_HOST");
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().message.find("OLLAMA_HOST \"http://127.0.0.1:8000]\""),
            std::string::npos)
      << client.error().message;
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("OLLAMA_HOST"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("']'"), std::string::npos) << run.err;
}

TEST(HostUrl, HostFlagsAndHostFilesRefuseWhatCannotBeReadNamingIt) {
  FakeServer server;
  const std::string input = write_temp_file("host_urls.jsonl", jsonl_tickets(2));
  for (const std::string& value :
       {std::string("http://127.0.0.1:8000]"), "http://[::1:" + std::to_string(server.port())}) {
    auto ask = run_clef({"ask", "hello", "--yes-no", "u: U?", "--host", value});
    EXPECT_EQ(ask.code, 2) << value << ": " << ask.err;
    EXPECT_NE(ask.err.find("cannot read the host"), std::string::npos) << ask.err;
    const std::string hosts =
        write_temp_file("host_urls_hosts.txt", server.base_url() + "\n" + value + "\n");
    auto batch = run_clef({"batch", input, "-o", fresh_path("host_urls_out.jsonl"), "--yes-no",
                           "u: U?", "--hosts", hosts});
    EXPECT_EQ(batch.code, 2) << batch.err;
    EXPECT_NE(batch.err.find(hosts + ":2"), std::string::npos) << batch.err;
  }
  EXPECT_EQ(server.request_count(), 0);
  // A byte order mark an editor put first is not part of the first host.
  const std::string bom =
      write_temp_file("host_urls_bom.txt", "\xEF\xBB\xBF" + server.base_url() + "\n");
  auto with_bom = run_clef({"batch", input, "-o", fresh_path("host_urls_bom.jsonl"), "--yes-no",
                            "u: U?", "--hosts", bom});
  EXPECT_EQ(with_bom.code, 0) << with_bom.err;
  // HTTP:// in capitals is taken, as curl takes it.
  auto upper = run_clef({"ask", "hello", "--yes-no", "u: U?", "--host",
                         "HTTP://127.0.0.1:" + std::to_string(server.port())});
  EXPECT_EQ(upper.code, 0) << upper.err;
}

TEST(HostUrl, OneServerIsOneServerHoweverItIsSpelled) {
  const std::vector<std::vector<std::string>> same = {
      {"http://localhost:8000", "http://LOCALHOST:8000/", "HTTP://LocalHost:8000"},
      {"http://127.0.0.1:80", "http://127.1", "http://2130706433:80", "http://0x7f.0.0.1"},
      {"http://[::1]:8000", "http://[0:0:0:0:0:0:0:1]:8000", "http://[0000::0001]:8000"},
      {"https://example.com", "https://example.com:443", "https://alice:pw@example.com"},
      {"http://h:8080/ollama", "http://h:08080/ollama/"},
      {"http://127.0.0.1:80", "http://[::ffff:127.0.0.1]", "http://[::FFFF:7f00:1]:80"},
      {"http://h/x~y", "http://h/%78%7e%79", "http://h/%78~y/", "http://h/a/../x~y"},
      {"http://127.0.0.1:80", "http://127.0.0.1/x/..", "http://127.0.0.1/."},
  };
  for (const auto& group : same) {
    for (const auto& url : group)
      EXPECT_EQ(clef::server_identity(url), clef::server_identity(group.front())) << url;
  }
  EXPECT_NE(clef::server_identity("http://h:80"), clef::server_identity("https://h:80"));
  EXPECT_NE(clef::server_identity("http://h:80"), clef::server_identity("http://h:81"));
  EXPECT_NE(clef::server_identity("http://h/a"), clef::server_identity("http://h/b"));
  EXPECT_EQ(clef::server_identity("http://alice:S3cret@h"), "http://h:80");  // no password

  FakeServer server;
  const std::string port = std::to_string(server.port());
  const std::string input = write_temp_file("same_server.jsonl", jsonl_tickets(2));
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"http://localhost:" + port, "http://LOCALHOST:" + port},
           {"http://127.0.0.1:" + port, "http://127.1:" + port},
           {"http://127.0.0.1:" + port, "http://2130706433:" + port},
           {"http://alice:one@127.0.0.1:" + port, "http://bob:two@127.0.0.1:" + port}}) {
    auto run = run_clef({"batch", input, "-o", fresh_path("same_server_out.jsonl"), "--yes-no",
                         "u: U?", "--host", a, "--host", b, "--mixed-fleet"});
    EXPECT_EQ(run.code, 2) << a << " " << b << ": " << run.err;
    EXPECT_NE(run.err.find("host given twice: "), std::string::npos) << run.err;

    EXPECT_EQ(run.err.find("one@"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("two@"), std::string::npos) << run.err;
  }
  EXPECT_EQ(server.request_count(), 0);
}

TEST(HostUrl, APasswordInTheUrlReachesNoOutputWhenTheServerEchoesTheHeader) {
  // The password, and "alice:PASSWORD", each base64-encoded with and without its padding.
  const std::string password = "Tr0ub4dor-and-3x";
  const std::vector<std::string> forms = {"YWxpY2U6VHIwdWI0ZG9yLWFuZC0zeA==",
                                          "YWxpY2U6VHIwdWI0ZG9yLWFuZC0zeA",
                                          "VHIwdWI0ZG9yLWFuZC0zeA==",
                                          "VHIwdWI0ZG9yLWFuZC0zeA",
                                          "alice:" + password,
                                          password};
  FakeServer server;
  server.set_script([&](const clef::testing::RecordedRequest&,
                        int) -> std::optional<clef::testing::Scripted> {
    std::string echoed;
    for (const auto& form : forms) echoed += form + " ";
    return clef::testing::Scripted{
        500, R"({"error":")" + echoed + R"("})", "application/json", {{"X-Request-Id", forms[1]}}};
  });
  const std::string host =
      "http://alice:" + password + "@127.0.0.1:" + std::to_string(server.port());
  const std::string output = fresh_path("basic_echo.jsonl");
  const std::string cassette = fresh_path("basic_echo.cassette.jsonl");
  auto batch = run_clef({"batch", write_temp_file("basic_echo_in.jsonl", jsonl_tickets(2)), "-o",
                         output, "--yes-no", "u: U?", "--retries", "0", "--host", host});
  auto ask = run_clef({"ask", "hello", "--yes-no", "u: U?", "--retries", "0", "--json", "--host",
                       host, "--record", cassette});
  EXPECT_EQ(batch.code, 6) << batch.err;
  EXPECT_NE(ask.code, 0);
  for (const std::string& text :
       {batch.err, read_file(output), ask.out, ask.err, read_file(cassette)}) {
    for (const auto& form : {forms[1], forms[3], password})  // each form holds one of these
      EXPECT_EQ(text.find(form), std::string::npos) << form << " in " << text;
  }
  EXPECT_NE(read_file(output).find("<redacted>"), std::string::npos);

  // A password written percent-encoded in the URL, echoed as written.
  FakeServer escaped;
  escaped.set_script(
      [](const clef::testing::RecordedRequest&, int) -> std::optional<clef::testing::Scripted> {
        return clef::testing::Scripted{500, R"({"error":"x p%40ss%25w0rd y p@ss%w0rd"})"};
      });
  const std::string escaped_host =
      "http://user:p%40ss%25w0rd@127.0.0.1:" + std::to_string(escaped.port());
  const std::string escaped_cassette = fresh_path("basic_escaped.cassette.jsonl");
  auto echoed = run_clef({"ask", "hello", "--yes-no", "u: U?", "--retries", "0", "--host",
                          escaped_host, "--record", escaped_cassette});
  EXPECT_NE(echoed.code, 0);
  for (const std::string& text : {echoed.err, read_file(escaped_cassette)}) {
    EXPECT_EQ(text.find("p%40ss%25w0rd"), std::string::npos) << text;
    EXPECT_EQ(text.find("p@ss%w0rd"), std::string::npos) << text;
  }
}

}  // namespace
