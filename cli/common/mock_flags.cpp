// The implementation of mock_flags.hpp: `clef mock`'s flags and examples.
#include "common/mock_flags.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/flag_rules.hpp"

namespace clef::cli {
namespace {

/// The failures, limits and budgets it can be asked to show.
void declare_fault_flags(CLI::App& app, MockFlags& flags) {
  app.add_option("--fail-rate", flags.fail_rates,
                 "STATUS:SHARE,… of decisions that fail (503:0.05)");
  app.add_option("--drop-rate", flags.drop_rate, "Share of decisions whose connection drops")
      ->check(finite_number() & CLI::Range(0.0, 1.0));
  app.add_option("--retry-after", flags.retry_after, "Retry-After seconds on 429/503 answers")
      ->check(CLI::Range(0, 86400));
  app.add_flag("--quota-exhausted", flags.quota,
               "Every decision gets the daily-allocation 429 (4006)");
  app.add_option("--capacity", flags.capacity,
                 "Decisions answered at once; one more gets 503 \"server busy\" (0: no limit)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  app.add_option("--rate-limit", flags.rate_limit,
                 "Decisions a second (a token bucket, one second's burst); one more gets 429 "
                 "with Retry-After: 1 (0: no limit)")
      ->check(finite_number() & CLI::Range(0.0, 1000000.0));
  app.add_option("--spend-limit", flags.spend_limit,
                 "workers-ai: once the neurons it measured cost more than USD, every decision "
                 "gets AI Gateway's 429 \"Spend limit exceeded\" (code 2041)")
      ->type_name("USD")
      ->check(finite_number() & CLI::Range(0.0, 1e9));
}

/// The simulated model's flaws, for clef eval's probes to find.
void declare_flaw_flags(CLI::App& app, MockFlags& flags) {
  app.add_option("--position-bias", flags.position_bias,
                 "Pull each choice's and score's probabilities toward the option listed first: "
                 "p' = (1 - B) p + B for it (0.5 or more: the first always wins)")
      ->type_name("B")
      ->check(finite_number() & CLI::Range(0.0, 1.0));
  app.add_option("--noise", flags.noise,
                 "Multiply each probability by exp(S z), z drawn per request from --seed, and "
                 "renormalise: the same request twice may get different answers")
      ->type_name("S")
      ->check(finite_number() & CLI::Range(0.0, 10.0));
}

}  // namespace

void declare_mock_flags(CLI::App& app, MockFlags& flags) {
  app.footer(
      "Examples:\n"
      "  clef mock &    # prints its URL, http://127.0.0.1:PORT, on stdout's first line\n"
      "  clef mock --port 0 --models clef --rules rules.json --log requests.jsonl > mock.txt &\n"
      "  clef mock --profile workers-ai --token secret --rate-limit 20\n");
  app.add_option("--port", flags.port, "Port on 127.0.0.1 (0: a free one; a port in use: exit 2)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--profile", flags.profile, "The server it imitates")
      ->check(CLI::IsMember(
          {"ollama", "workers-ai", "typesafe", "llamacpp", "laya", "ollaya", "openai"}))
      ->capture_default_str();
  app.add_option("--models", flags.models, "Models it serves (default: clef-flash)")
      ->delimiter(',');
  app.add_option("--rules", flags.rules_path,
                 "Answer rules (JSON; see docs/offline.md, installed as "
                 "/usr/share/doc/clef/docs/offline.md.gz)");
  app.add_option("--cassette", flags.cassette_path, "Answer from a --record cassette");
  app.add_option("--latency", flags.latency_ms, "Milliseconds before each answer")
      ->check(CLI::Range(0L, 600000L));
  declare_fault_flags(app, flags);
  declare_flaw_flags(app, flags);
  app.add_option("--log", flags.log_path, "Append each request as a JSON line to FILE");
  app.add_option("--max-connections", flags.max_connections,
                 "Connections served at once, each on its own thread; more wait")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  app.add_option("--seed", flags.seed, "Seed of the fault and --noise draws")
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--token", [&flags](const std::string& token) { flags.token = token; },
         "workers-ai and openai: the only Bearer token accepted (default: any; a wrong one gets "
         "401)")
      ->type_name("TOKEN");
  app.add_option("--gateway", flags.gateway,
                 "workers-ai: the name of the account's AI Gateway, served at "
                 "/v1/ACCOUNT/NAME/workers-ai/MODEL (default: default; another name gets 400, "
                 "code 2001)")
      ->type_name("NAME");
  app.add_option_function<std::string>(
         "--gateway-token", [&flags](const std::string& token) { flags.gateway_token = token; },
         "workers-ai: the gateway is an Authenticated Gateway taking only cf-aig-authorization: "
         "Bearer TOKEN (others get 401, code 2009)")
      ->type_name("TOKEN");
  one_value_per_occurrence(app);
  decimal_numbers_only(app);
  no_empty_values(app);
}

}  // namespace clef::cli
