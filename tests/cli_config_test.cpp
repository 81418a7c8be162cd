// The config file: profiles, precedence (flag > environment > file), refusals that name the file
// and line, and `clef config show` with its secrets masked.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "support/child_clef.hpp"
#include "support/cli_runner.hpp"
#include "support/fake_server.hpp"

using namespace clef::testing;
using Json = nlohmann::ordered_json;

namespace {

/// Sets an environment variable for one test and restores what was there.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

/// The host a decision went to: each server counts its own.
std::size_t sent_to(const FakeServer& server) {
  return server.requests().size();
}

std::vector<std::string> ask(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"ask", "--yes-no", "urgent: Is it urgent?", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("the printer is on fire");
  return args;
}

}  // namespace

TEST(CliConfig, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  FakeServer from_file, from_profile, from_environment, from_flag;
  const std::string config =
      write_temp_file("precedence.toml", "host = \"" + from_file.base_url() +
                                             "\"\nretries = 0\n\n[profiles.other]\nhost = \"" +
                                             from_profile.base_url() + "\"\n");
  ScopedEnvironment file("CLEF_CONFIG", config);
  ASSERT_EQ(run_clef(ask()).code, 0);
  EXPECT_EQ(sent_to(from_file), 1u) << "the file's host, with no flag and no OLLAMA_HOST";
  ASSERT_EQ(run_clef(ask({"--profile", "other"})).code, 0);
  EXPECT_EQ(sent_to(from_profile), 1u) << "a profile's value over the file's top level";
  {
    ScopedEnvironment profile("CLEF_PROFILE", "other");
    ASSERT_EQ(run_clef(ask()).code, 0);
    EXPECT_EQ(sent_to(from_profile), 2u) << "CLEF_PROFILE picks it too";
  }
  {
    ScopedEnvironment host("OLLAMA_HOST", from_environment.base_url());
    ASSERT_EQ(run_clef(ask()).code, 0);
    EXPECT_EQ(sent_to(from_environment), 1u) << "the environment over the file";
    ASSERT_EQ(run_clef(ask({"--host", from_flag.base_url()})).code, 0);
    EXPECT_EQ(sent_to(from_flag), 1u) << "the flag over the environment";
  }
  EXPECT_EQ(sent_to(from_file), 1u);
  // --config beats CLEF_CONFIG; a file given but missing is an error, not a silent default.
  from_flag.set_models({"clef-flash", "other"});
  const std::string other = write_temp_file("other.toml", "model = \"other\"\n");
  auto r = run_clef(ask({"--config", other, "--host", from_flag.base_url()}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(from_flag.requests().back().body)["model"], "other");
  auto missing = run_clef(ask({"--config", config + ".gone"}));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find(config + ".gone"), std::string::npos) << missing.err;
}

TEST(CliConfig, AListOfHostsGoesWholeToABatchAndItsFirstToAnAsk) {
  FakeServer first, second;
  const std::string config = write_temp_file(
      "hosts.toml", "host = [\"" + first.base_url() + "\", \"" + second.base_url() + "\"]\n");
  auto asked = run_clef(ask({"--config", config}));
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_EQ(sent_to(first), 1u);
  EXPECT_EQ(sent_to(second), 0u);
  const std::string input = write_temp_file("config_hosts_in.jsonl", jsonl_tickets(20));
  auto batch =
      run_clef({"batch", input, "--config", config, "-o", fresh_path("config_hosts_out.jsonl"),
                "--yes-no", "urgent: Is it urgent?"});
  ASSERT_EQ(batch.code, 0) << batch.err;
  EXPECT_EQ(sent_to(first) + sent_to(second), 21u);
  EXPECT_GT(sent_to(second), 0u) << "the batch sent to both";
}

TEST(CliConfig, TheDefaultFileIsReadAndItsDefaultProfileUsed) {
  FakeServer a, b;
  const std::string home = fresh_path("config_home");
  ::mkdir(home.c_str(), 0700);  // there already from an earlier run, or made now
  ::mkdir((home + "/clef").c_str(), 0700);
  write_temp_file("config_home/clef/config.toml", "default_profile = \"b\"\nhost = \"" +
                                                      a.base_url() + "\"\n[profiles.b]\nhost = \"" +
                                                      b.base_url() + "\"\nconcurrency = 3\n");
  ScopedEnvironment xdg("XDG_CONFIG_HOME", home);
  ASSERT_EQ(run_clef(ask()).code, 0);
  EXPECT_EQ(sent_to(b), 1u);
  EXPECT_EQ(sent_to(a), 0u);
  EXPECT_EQ(run_clef({"config", "path"}).out, home + "/clef/config.toml\n");
  {
    // The default file as a link to nothing, or a loop: its settings are not silently gone.
    const std::string links = fresh_path("config_links");
    ::mkdir(links.c_str(), 0700);
    ::mkdir((links + "/clef").c_str(), 0700);
    ScopedEnvironment dangling("XDG_CONFIG_HOME", links);
    for (const std::string& target : {links + "/nowhere.toml", links + "/clef/config.toml"}) {
      ::unlink((links + "/clef/config.toml").c_str());
      ASSERT_EQ(::symlink(target.c_str(), (links + "/clef/config.toml").c_str()), 0);
      auto r = run_clef(ask());
      EXPECT_EQ(r.code, 2) << target;
      EXPECT_NE(r.err.find("symbolic link that leads to no file"), std::string::npos) << r.err;
    }
    EXPECT_EQ(sent_to(b), 1u) << "nothing more was sent";
  }
  {
    // XDG: a relative path in the variable is invalid, and ignored.
    ScopedEnvironment relative("XDG_CONFIG_HOME", "relative/dir");
    EXPECT_EQ(run_clef({"config", "path"}).out.find("relative/dir"), std::string::npos);
  }
  auto shown = run_clef({"config", "show", "--json"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  const Json json = Json::parse(shown.out);
  EXPECT_EQ(json["file"], home + "/clef/config.toml");
  EXPECT_EQ(json["profile"], "b");
  for (const auto& setting : json["settings"]) {
    if (setting["key"] == "concurrency") {
      EXPECT_EQ(setting["value"], "3");
      EXPECT_EQ(setting["source"], "profile b");
      EXPECT_EQ(setting["where"], home + "/clef/config.toml:5");
    }
    if (setting["key"] == "model") {
      EXPECT_EQ(setting["value"], "clef-flash");
      EXPECT_EQ(setting["source"], "default");
    }
  }
}

TEST(CliConfig, AProfileAskedForWithoutAConfigFileIsRefusedNotIgnored) {
  // CLEF_PROFILE set for a job whose config file is not where clef looks: the run would have
  // gone to the default server with none of the profile's settings.
  FakeServer server;
  const std::string home = fresh_path("config_home_empty");
  ::mkdir(home.c_str(), 0700);
  ScopedEnvironment xdg("XDG_CONFIG_HOME", home);
  const std::string looked = home + "/clef/config.toml";
  {
    ScopedEnvironment profile("CLEF_PROFILE", "prod");
    auto r = run_clef(ask({"--host", server.base_url()}));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no config file to take the profile 'prod' from: none at " + looked),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("CLEF_PROFILE"), std::string::npos) << r.err;
    EXPECT_EQ(run_clef({"config", "path"}).out, looked + "\n") << "where to write it: still said";
  }
  {
    // An empty value is refused in any profile of the file, used or not, naming its line.
    const std::string with_file = fresh_path("config_home_empty_value");
    ::mkdir(with_file.c_str(), 0700);
    ::mkdir((with_file + "/clef").c_str(), 0700);
    write_temp_file("config_home_empty_value/clef/config.toml", "[profiles.p]\ncache = \"\"\n");
    ScopedEnvironment elsewhere("XDG_CONFIG_HOME", with_file);
    auto r = run_clef(ask({"--host", server.base_url()}));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("cache is empty"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(with_file + "/clef/config.toml:2"), std::string::npos) << r.err;
  }
  auto flag = run_clef(ask({"--host", server.base_url(), "--profile", "prod"}));
  EXPECT_EQ(flag.code, 2) << flag.err;
  EXPECT_NE(flag.err.find("--profile"), std::string::npos) << flag.err;
  EXPECT_EQ(sent_to(server), 0u);
  EXPECT_EQ(run_clef(ask({"--host", server.base_url()})).code, 0) << "no profile: no file needed";
  EXPECT_EQ(sent_to(server), 1u);
}

TEST(CliConfig, ShowNamesEverySourceAndMasksSecrets) {
  const std::string token_file = write_temp_file("cf-token", "s3cret-token-value\n");
  const std::string config = write_temp_file(
      "show.toml", "backend = \"workers-ai\"\naccount_id = \"0123abcd\"\napi_token_file = \"" +
                       token_file + "\"\nmodel = \"@cf/cloudflare/clef-flash\"\n");
  ScopedEnvironment file("CLEF_CONFIG", config);
  auto plain = run_clef({"config", "show"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("api_token_file"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(token_file + "  [file " + config + ":3]"), std::string::npos)
      << plain.out;
  EXPECT_EQ(plain.out.find("s3cret"), std::string::npos) << "the file's content is never shown";
  {
    ScopedEnvironment token("CLOUDFLARE_API_TOKEN", "environment-token-0123456789");
    ScopedEnvironment account("CLOUDFLARE_ACCOUNT_ID", "fedcba98");
    auto shown = run_clef({"config", "show"});
    ASSERT_EQ(shown.code, 0) << shown.err;
    EXPECT_EQ(shown.out.find("environment-token"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("******** (set, 28 characters)  [environment CLOUDFLARE_API_TOKEN]"),
              std::string::npos)
        << shown.out;
    EXPECT_NE(shown.out.find("fedcba98  [environment CLOUDFLARE_ACCOUNT_ID]"), std::string::npos)
        << shown.out;
  }
}

TEST(CliConfig, AnUnusableTokenFileIsNamedWhereverItWasGiven) {
  // A byte order mark, a space, a second line: named as the file, from the flag or from a
  // config file's api_token_file, with no advice about the command line or the server.
  for (const std::string& content :
       {std::string("\xef\xbb\xbftoken123\n"), std::string("Bearer token123\n"),
        std::string("token123\nsecond\n")}) {
    const std::string token = write_temp_file("unusable_token", content);
    const std::string config = write_temp_file(
        "token_file.toml",
        "backend = \"workers-ai\"\naccount_id = \"abc\"\napi_token_file = \"" + token + "\"\n");
    for (const auto& args :
         {std::vector<std::string>{"ask", "--backend", "workers-ai", "--account-id", "abc",
                                   "--api-token-file", token, "--yes-no", "u: U?", "x"},
          std::vector<std::string>{"--config", config, "ask", "--yes-no", "u: U?", "x"}}) {
      auto r = run_clef(args);
      EXPECT_EQ(r.code, 3) << r.err;
      EXPECT_NE(r.err.find("the token file holds a space, a control character"), std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find(token), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("--help"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("token123"), std::string::npos) << "never the token: " << r.err;
    }
  }
  // The same token from the environment is as unusable: exit 3 too, not a mistake of syntax.
  for (const std::string& token : {std::string("cf-SECRET\x1bTOKEN"), std::string("cf SECRET")}) {
    ScopedEnvironment variable("CLOUDFLARE_API_TOKEN", token);
    auto r = run_clef(
        {"ask", "--backend", "workers-ai", "--account-id", "abc", "--yes-no", "u: U?", "x"});
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("CLOUDFLARE_API_TOKEN"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("--help"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << "never the token: " << r.err;
  }
}

TEST(CliConfig, ABadFileIsRefusedNamingItsLine) {
  FakeServer server;
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"model = \"a\"\napi_token = \"abc\"\n", ":2)"},
           {"model = \"a\"\napi_token = \"abc\"\n", "give api_token_file"},
           {"colour = \"blue\"\n", "'colour' is not a setting clef knows"},
           {"host = 5\n", "host must be a string or a list of strings"},
           {"host = []\n", "host is an empty list"},
           {"retries = [1, 2]\n", "retries must be a string, a number or true/false"},
           {"model = \"a\n", "not TOML"},
           {"profiles = 3\n", "profiles must be tables"},
           {"model = \"a\"\n[profiles.unused]\napi_key = \"abc\"\n", ":3)"},
           {"[profiles.unused]\nfoo = 1\n", "'foo' is not a setting clef knows"},
           {"[profiles.a]\nmodel = \"x\"\n", ""}}) {
    const std::string config = write_temp_file("bad.toml", text);
    auto r = run_clef(ask({"--config", config, "--host", server.base_url()}));
    if (says.empty()) {
      EXPECT_EQ(r.code, 0) << text << r.err;
      continue;
    }
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_NE(r.err.find(config), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  // A FIFO as the config file: refused at once, not waited on.
  const std::string fifo = fresh_path("config.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto waited = run_clef_child(ask({"--config", fifo, "--host", server.base_url()}),
                               std::chrono::seconds(30));
  ASSERT_TRUE(waited.finished);
  EXPECT_EQ(waited.code, 2);
  EXPECT_NE(waited.err.find("not a regular file"), std::string::npos) << waited.err;
  const std::string config = write_temp_file("profiles.toml", "[profiles.a]\nmodel = \"x\"\n");
  auto unknown = run_clef(ask({"--config", config, "--profile", "b"}));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no profile 'b'"), std::string::npos) << unknown.err;
  // A value the flag refuses says it came from the file.
  const std::string zero = write_temp_file("zero.toml", "concurrency = 0\n");
  auto refused = run_clef({"batch", "--config", zero, "-", "--yes-no", "u: U?"});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("concurrency = 0: Value 0 not in range 1 to 10000 (" + zero + ":1)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("--help"), std::string::npos)
      << "a mistake in the file is not one of the command line: " << refused.err;
  // `clef config show` refuses what every command would, naming the line.
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"concurrency = \"sixteen\"\n", "concurrency = sixteen"},
           {"model = \"m\"\ntimeout = -5\n", "timeout = -5"},
           {"retries = 1e9\n", "retries = 1e+09"},
           {"backend = \"nope\"\n", "unknown backend 'nope'"}}) {
    const std::string file = write_temp_file("show.toml", text);
    auto show = run_clef({"--config", file, "config", "show"});
    EXPECT_EQ(show.code, 2) << text << show.out;
    EXPECT_NE(show.err.find(says), std::string::npos) << show.err;
    EXPECT_NE(show.err.find(file + ":"), std::string::npos) << show.err;
  }
  EXPECT_EQ(server.requests().size(), 1u) << "only the good file's ask was sent";
}
