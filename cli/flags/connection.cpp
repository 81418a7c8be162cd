// The implementation of connection.hpp: flags shared by every command that talks to a server, and
// the client they make.
#include "flags/connection.hpp"
#include "common/flag_rules.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>

#include "clef/cache.hpp"
#include "clef/cassette.hpp"
#include "clef/ollama.hpp"
#include "common/files.hpp"
#include "common/terminal_text.hpp"
#include "flags/hosts.hpp"
#include "flags/price_flag.hpp"
#include "flags/verbose_transport.hpp"

namespace clef::cli {
namespace {

Result<std::string> read_token_file(const std::string& path) {
  auto text = read_file(path, "the token file", std::cin, 64u * 1024u);
  if (!text) return text.error();
  // White space around the key is the file's, not the key's: sent, it would not match what is
  // redacted from a server's echo of the bare key.
  const std::string& raw = text.value();
  const auto first = raw.find_first_not_of(" \t\r\n");
  std::string token = first == std::string::npos
                          ? ""
                          : raw.substr(first, raw.find_last_not_of(" \t\r\n") - first + 1);
  if (token.empty()) return make_error(ErrorKind::authentication, "the token file is empty", path);
  // Said here, naming the file (which a config file's api_token_file may have chosen): the
  // client would refuse the token too, but could only name the flag.
  for (const char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return make_error(ErrorKind::authentication,
                        "the token file holds a space, a control character or a byte outside "
                        "visible ASCII (a byte order mark, a 'Bearer ' prefix, two lines?): "
                        "write the bare token alone",
                        path);
    }
  }
  return token;
}

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

/// --record, --replay and --cache: where answers come from besides the server.
void add_offline_flags(CLI::App& command, ConnectionFlags& flags) {
  CLI::Option* record = command.add_option(
      "--record", flags.record, "Append every exchange with the server to this cassette (JSONL)");
  record->type_name("FILE");
  command
      .add_option("--replay", flags.replay,
                  "Answer from this cassette with no network; a request it lacks fails (exit 9)")
      ->type_name("FILE")
      ->excludes(record);
  command
      .add_option("--cache", flags.cache,
                  "Answer repeated requests from this directory (default: CLEF_CACHE_DIR; off "
                  "when neither is set, and under --replay); keyed by the whole request and the "
                  "model's version")
      ->type_name("DIR")
      ->excludes("--replay");
  command.add_flag("--cache-images", flags.cache_images,
                   "With --cache: cache requests with images too");
}

}  // namespace

bool through_gateway(const ConnectionFlags& flags) {
  return traits_of(flags.backend).takes_gateway &&
         (flags.gateway.gateway ||
          (!flags.hosts.empty() && is_ai_gateway_url(flags.hosts.front())));
}

namespace {

/// --backend by name. CLI11's CheckedTransformer would show its map ({ollama->0,...} OR {0,2,1})
/// in the help and in the error, and take the enum's numbers: this one knows the names only.
CLI::Validator backend_name() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::optional<Backend> backend = backend_named(value);
        if (!backend) {
          return "unknown backend '" + value + "': use ollama, workers-ai, systemone or openai";
        }
        value = std::to_string(static_cast<int>(*backend));
        return std::string();
      },
      "", "backend");
}

}  // namespace

std::vector<NamedFile> connection_inputs(const ConnectionFlags& flags) {
  return {{"--hosts", flags.hosts_file},
          {"--api-token-file", flags.api_token_file},
          {"--aig-token-file", flags.gateway.token_file},
          {"--replay", flags.replay},
          {"--prices", flags.price_file},
          {"--ca-cert", flags.ca_cert}};
}

void add_connection_flags(CLI::App& command, ConnectionFlags& flags) {
  command.add_option("--backend", flags.backend, "ollama | workers-ai | systemone | openai")
      ->transform(backend_name())
      ->type_name("NAME")
      ->default_str("ollama");
  command
      .add_option("--host", flags.hosts,
                  "Server base URL (batch and eval: repeat it to send to several servers). "
                  "Defaults: ollama: OLLAMA_HOST, else http://127.0.0.1:11434; "
                  "workers-ai: https://api.cloudflare.com/client/v4 (/client/v4 is added to a "
                  "bare host); systemone: none, required; openai: https://api.openai.com/v1 "
                  "(clef adds /decisions)")
      ->type_name("URL");
  command.add_option("-m,--model", flags.model, "Model name")->capture_default_str();
  command.add_flag("--any-model", flags.any_model,
                   "Take answers whatever model the server says gave them (llama.cpp reports "
                   "its own file's name); by default another model's answers are invalid");
  command.add_option("--account-id", flags.account_id,
                     "Workers AI account id (default: CLOUDFLARE_ACCOUNT_ID)");
  command.add_option("--api-token-file", flags.api_token_file,
                     "Read the API token from FILE (default: CLOUDFLARE_API_TOKEN for workers-ai, "
                     "CLEF_API_KEY for systemone, OPENAI_API_KEY for openai)");
  command
      .add_option("--timeout", flags.timeout_seconds,
                  "Seconds per attempt (a cold model load "
                  "takes many)")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.001, 86400.0));
  command.add_option("--connect-timeout", flags.connect_timeout_seconds, "Seconds to connect")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.001, 86400.0));
  command.add_option("--ca-cert", flags.ca_cert,
                     "Also trust the CA certificates in this PEM file (default: CURL_CA_BUNDLE, "
                     "else SSL_CERT_FILE); verification is never turned off");
  command.add_option("--proxy", flags.proxy,
                     "Send every request through this proxy, local servers too (default: "
                     "https_proxy / http_proxy / all_proxy, minus no_proxy, never for localhost)");
  command.add_option("--retries", flags.retries, "Retries for retryable failures")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0, 20));
  command
      .add_option("--max-retry-after", flags.max_retry_after_seconds,
                  "Longest Retry-After to wait out, in seconds (batch pauses at most this long)")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.0, 86400.0));
  command.add_flag("-v,--verbose", flags.verbose, "Print the request and each attempt on stderr");
  command.add_option("--price", flags.prices,
                     "MODEL=INPUT[,OUTPUT]: the model's price in dollars per million tokens, for "
                     "decisions whose server measures no cost (repeatable; replaces clef's "
                     "table)");
  command.add_option("--prices", flags.price_file,
                     "FILE of MODEL=INPUT[,OUTPUT] lines ('#' comments), as --price takes them; "
                     "a --price for the same model wins");
  add_offline_flags(command, flags);
  add_gateway_flags(command, flags.gateway);
}

namespace {

/// The cache for these flags, or none (with a warning when the model's version cannot be learned).
std::optional<CacheOptions> cache_options(const ConnectionFlags& flags,
                                          const ClientOptions& options, const Context& context) {
  if (flags.without_cache) return std::nullopt;
  std::string directory = flags.cache;
  if (directory.empty()) {
    const char* from_environment = std::getenv("CLEF_CACHE_DIR");
    if (from_environment) directory = from_environment;
  }
  if (directory.empty()) return std::nullopt;
  CacheOptions cache;
  cache.directory = directory;
  cache.include_images = flags.cache_images;
  cache.key_salt = flags.cache_salt;
  cache.validation = options.validation;
  // A question to the server before any decision: the first SIGINT ends it (nothing has
  // started that a second would abort), and it waits no longer than the fleet check does.
  ClientOptions lookup = options;
  if (context.stop) lookup.cancel = context.stop;
  lookup.request_timeout = std::min(lookup.request_timeout, std::chrono::milliseconds(10'000));
  lookup.connect_timeout = std::min(lookup.connect_timeout, std::chrono::milliseconds(10'000));
  auto version = resolve_model_version(lookup, flags.model);
  if (!version) {
    context.err << "clef: warning: the cache is off for this run: "
                << terminal_safe(version.error().message) << "\n";
    return std::nullopt;
  }
  cache.model_version = version->version;
  cache.ttl = version->ttl;
  return cache;
}

}  // namespace

namespace {

/// The options for these flags, without a transport.
/// --prices FILE's rows, each replaced by a --price for the same model.
Result<std::map<std::string, Price>> prices_of(const ConnectionFlags& flags,
                                               const Context& context) {
  auto given = parse_prices(flags.prices);
  if (!given || flags.price_file.empty()) return given;
  // A price file is a few lines by hand: a megabyte is far more than any.
  auto text = read_file(flags.price_file, "the price file", context.in, 1u << 20);
  if (!text) return text.error();
  auto prices = parse_price_file(text.value(), flags.price_file);
  if (!prices) return prices.error();
  for (auto& [model, price] : given.value()) prices.value()[model] = price;
  return prices;
}

Result<ClientOptions> base_options(const ConnectionFlags& flags, const Context& context) {
  ClientOptions options = ClientOptions::from_environment(flags.backend);
  if (!flags.hosts.empty()) {
    const std::string& host = flags.hosts.front();
    if (auto valid = check_host_value(host, "--host"); !valid) return valid.error();
    if (traits_of(flags.backend).host_variable) {
      // Read as the variable would be (Ollama's bare host:port forms).
      auto url = read_ollama_host(host);
      if (!url) return make_error(ErrorKind::invalid_input, url.error().message, "--host");
      options.base_url = std::move(url).value();
    } else {
      options.base_url = host;
    }
  }
  if (!flags.account_id.empty()) options.account_id = flags.account_id;
  const std::string account_source =
      flags.account_id.empty() ? workers_ai_account_variable : "--account-id";
  if (auto gateway =
          apply_gateway_flags(flags.gateway, options.account_id, account_source, options);
      !gateway)
    return gateway.error();
  if (!flags.api_token_file.empty()) {
    auto token = read_token_file(flags.api_token_file);
    if (!token) return token.error();
    options.api_token = std::move(token).value();
  }
  if (!flags.gateway.token_file.empty()) {
    const bool gateway =
        flags.gateway.gateway || (!flags.hosts.empty() && is_ai_gateway_url(flags.hosts.front()));
    if (!traits_of(flags.backend).takes_gateway || !gateway) {
      return make_error(ErrorKind::invalid_input,
                        "--aig-token-file: an AI Gateway token needs a gateway (--backend "
                        "workers-ai with --gateway, or a gateway URL as --host)",
                        "--aig-token-file");
    }
    auto token = read_token_file(flags.gateway.token_file);
    if (!token) return token.error();
    options.gateway.token = std::move(token).value();
  }
  if (!flags.ca_cert.empty()) options.ca_file = flags.ca_cert;
  if (!flags.proxy.empty()) options.proxy = flags.proxy;
  options.model = flags.model;
  options.validation.require_asked_model = !flags.any_model;
  options.request_timeout = to_ms(flags.timeout_seconds);
  options.connect_timeout = to_ms(flags.connect_timeout_seconds);
  options.retry.max_attempts = flags.retries + 1;
  options.retry.max_retry_after = to_ms(flags.max_retry_after_seconds);
  // A replayed error is the recording's last word: sending it again replays it again, and its
  // Retry-After would only be slept through.
  if (!flags.replay.empty()) options.retry.max_attempts = 1;
  options.cancel = context.cancel;
  auto prices = prices_of(flags, context);
  if (!prices) return prices.error();
  options.prices = std::move(prices).value();
  return options;
}

/// --replay's cassette, read once (its warnings shown); null without --replay.
Result<std::shared_ptr<ReplayTransport>> load_replay(const ConnectionFlags& flags,
                                                     const Context& context) {
  if (flags.replay.empty()) return std::shared_ptr<ReplayTransport>();
  auto replay = make_replay_transport(flags.replay, to_string(flags.backend));
  if (!replay) return replay.error();
  for (const auto& warning : replay.value()->warnings()) {
    context.err << "clef: warning: " << terminal_safe(warning) << "\n";
  }
  return replay;
}

/// The cassette (`replay`, from load_replay) or the network, shown with -v: blocking, for what
/// is not a decision (doctor, models, the model's digest that keys the cache).
std::shared_ptr<Transport> source_transport(const ConnectionFlags& flags, const Context& context,
                                            std::shared_ptr<ReplayTransport> replay) {
  std::shared_ptr<Transport> source =
      replay ? std::shared_ptr<Transport>(std::move(replay)) : make_curl_transport();
  if (flags.verbose) return make_verbose_transport(std::move(source), context.err);
  return source;
}

/// `transport` recorded into --record's cassette, when given. Outermost, so what the cache
/// answers is recorded too: the replay then has every answer the run gave.
Result<std::shared_ptr<Transport>> recorded(const ConnectionFlags& flags,
                                            std::shared_ptr<Transport> transport) {
  if (flags.record.empty()) return transport;
  auto recording =
      make_recording_transport(std::move(transport), flags.record, to_string(flags.backend));
  if (!recording) return recording.error();
  return std::shared_ptr<Transport>(std::move(recording).value());
}

}  // namespace

Result<ClientOptions> client_options(const ConnectionFlags& flags, const Context& context) {
  auto options = base_options(flags, context);
  if (!options) return options.error();
  auto replay = load_replay(flags, context);
  if (!replay) return replay.error();
  auto transport = recorded(flags, source_transport(flags, context, std::move(replay).value()));
  if (!transport) return transport.error();
  options->transport = std::move(transport).value();
  return options;
}

Result<Client> make_client(const ConnectionFlags& flags, const Context& context, bool offline) {
  if (flags.hosts.size() > 1 || !flags.hosts_file.empty()) {
    return make_error(ErrorKind::invalid_input,
                      "only clef batch and clef eval send to several hosts: give one --host",
                      "--host");
  }
  return make_one_client(flags, context, offline, nullptr);
}

namespace {

/// The decisions' pipeline on the event loop, from the inside out: the cassette (--replay,
/// delivered on `network` when one is given) or `network`, shown with -v, answered from the
/// cache, recorded with --record (outermost, so what the cache answers is recorded too and the
/// replay has every answer the run gave). Each is a stage on the loop: no flag costs a batch a
/// thread per request.
Result<std::shared_ptr<AsyncTransport>> decision_loop(const ConnectionFlags& flags,
                                                      const Context& context,
                                                      const ClientOptions& options,
                                                      std::shared_ptr<ReplayTransport> replay,
                                                      std::shared_ptr<AsyncTransport> network,
                                                      bool offline) {
  std::shared_ptr<AsyncTransport> loop;
  if (replay)
    loop = network ? make_async_replay(std::move(replay), std::move(network))
                   : make_async_replay(std::move(replay));
  else
    loop = network ? std::move(network) : make_curl_loop();
  if (flags.verbose) loop = make_verbose_transport(std::move(loop), context.err);
  // Decisions only (not doctor or models), and never for a dry run, which contacts nothing, nor
  // a replay, which answers from its cassette only: a replay neither reads live entries nor
  // writes the cassette's answers under the live key.
  if (!offline && flags.replay.empty()) {
    if (auto cache = cache_options(flags, options, context)) {
      auto caching = make_caching_transport(loop, *cache, flags.backend);
      if (caching) {
        loop = std::move(caching).value();
      } else {
        context.err << "clef: warning: the cache is off for this run: "
                    << terminal_safe(caching.error().message) << "\n";
      }
    }
  }
  if (flags.record.empty()) return loop;
  auto recording =
      make_recording_transport(std::move(loop), flags.record, to_string(flags.backend));
  if (!recording) return recording.error();
  return std::shared_ptr<AsyncTransport>(std::move(recording).value());
}

}  // namespace

Result<Client> make_one_client(const ConnectionFlags& flags, const Context& context, bool offline,
                               std::shared_ptr<AsyncTransport> network) {
  auto options = base_options(flags, context);
  if (!options) return options.error();
  auto replay = load_replay(flags, context);
  if (!replay) return replay.error();
  options->transport = source_transport(flags, context, replay.value());
  // A replay sends nothing either: a CI job replaying a Workers AI cassette needs no token.
  options->offline = offline || replay.value();
  auto loop = decision_loop(flags, context, options.value(), std::move(replay).value(),
                            std::move(network), offline);
  if (!loop) return loop.error();
  options->async_transport = std::move(loop).value();
  return Client::create(std::move(options).value());
}

}  // namespace clef::cli
