// clef: a System One server for tests and CI — a real HTTP server on 127.0.0.1 (an ephemeral port)
// that answers POST /v1/systemone the way each published server does: its envelope, rounding,
// key order, confidence formula, request id header, request checks and error bodies, plus (as
// Ollama) /api/version, /api/tags and /api/show. Answers come from rules, then a cassette, then
// a deterministic default; faults come on demand. Requests are read as hostile input: bounded in
// size, depth and time. `clef mock` serves it from the shell.
//
//     clef::MockServer server(clef::MockProfile::ollama);
//     clef::ClientOptions options;
//     options.base_url = server.base_url();  // "http://127.0.0.1:PORT"
//     auto client = clef::Client::create(options);
//
// Fallible calls return clef::Result / clef::Status (clef/result.hpp), as the rest of clef does.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/result.hpp"

namespace clef {

namespace mock_detail {
struct ServerState;  // src/mock/server_state.hpp
}  // namespace mock_detail

enum class MockProfile {
  ollama,      ///< No rounding, Go-sorted probability keys, entropy confidence, {"error": "..."}.
  workers_ai,  ///< {result, success, errors, messages}; 4 decimals, JS integers; cf-ai-req-id.
  typesafe,    ///< 2 decimals (sums off by rounding), {"detail": ...}; x-typesafe-request-id.
  llamacpp,    ///< criteria key order, 422 {"error": {type, message, code}}, ignores model.
  laya,        ///< entropy confidence, adds "action" and "routing", {"detail": "..."}.
  ollaya,      ///< 4 decimals, {"error", "code", "detail"}, 503 QUEUE_FULL with Retry-After.
  /// OpenAI's POST /v1/decisions: a questions array, answers in order with typed choice values,
  /// refusals, {"error": {message, type, param, code}}, x-request-id, a Bearer key required.
  openai,
};

struct MockRequest {
  std::string method;
  std::string path;
  std::string body;
  std::multimap<std::string, std::string> headers;  ///< As received (case kept).
  int remote_port = 0;  ///< The client's port: equal across requests on a reused connection.
  std::string header(const std::string& name) const;
};

/// A response scripted by a test, replacing the simulated model for one request.
struct MockReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds delay{0};
  /// Send headers announcing the whole body, then only this many bytes, then close.
  std::optional<std::size_t> truncate_at;
};

/// A rule's `match`: an RE2 regular expression (https://github.com/google/re2/wiki/Syntax: no
/// backreferences, no lookaround), found anywhere in a state, case-insensitively. RE2 runs in
/// time linear in the state's length and never recurses per character, so no state and no
/// pattern can crash or stall the server.
class MockPattern {
 public:
  /// The longest pattern accepted, in bytes.
  static constexpr std::size_t max_length = 4096;
  /// The memory RE2 may use for one compiled pattern (its program and match caches); rules
  /// written by hand need a few KiB.
  static constexpr std::int64_t max_memory = 256 << 10;

  /// The empty pattern: found in every state.
  MockPattern() = default;
  /// The pattern compiled; an ErrorKind::invalid_input Error, whose message says why (RE2's
  /// reason, or the cap), when it is not RE2 syntax, is longer than max_length or compiles to
  /// more than max_memory.
  ///
  ///     auto refund = clef::MockPattern::compile("refund|charg");
  ///     if (!refund) std::cerr << refund.error().message << "\n";
  static Result<MockPattern> compile(const std::string& pattern);

  const std::string& text() const { return m_text; }
  bool found_in(std::string_view state) const;
  /// The size of the compiled program (RE2's ProgramSize; 0 for the empty pattern). Finding a
  /// pattern costs up to this much per byte of state when RE2 cannot use its DFA (a pattern like
  /// a[a-c]{29}b needs 2^29 DFA states), which is what the mock's rule budget counts.
  std::size_t program_size() const;

 private:
  struct Compiled;  // RE2, kept out of this header
  std::string m_text;
  std::shared_ptr<const Compiled> m_compiled;
};

/// The most work one request's rules may cost the mock: the sum, over every rule a question of
/// the request could try, of its program_size() × the state's bytes. A request past it is
/// answered 400 naming the figures, in the mock's own words, instead of holding a connection
/// thread for seconds (1,000 rules like a[a-c]{29}b against a 256 KB state took 28 s).
inline constexpr std::uint64_t max_mock_rule_work = std::uint64_t{1} << 29;

/// A scripted model: for `question` (and `model`, when not empty), a state in which `pattern`
/// occurs is answered `answer` (a choice label, yes/no, or a score level's label or index) with
/// `probability`; the other options share the rest equally. States no rule matches get the
/// default deterministic answer. `model` "clef" also covers "clef:latest", as Ollama names it.
struct MockRule {
  std::string model;
  std::string question;
  MockPattern pattern;
  std::string answer;
  double probability = 0.9;
};

/// Bounds on a rules file: past them parse_mock_rules refuses it.
inline constexpr std::size_t max_mock_rules_bytes = 1u << 20;
inline constexpr std::size_t max_mock_rules = 1000;

/// Rules from JSON: {"rules": [{"model"?, "question", "match" (RE2, see MockPattern),
/// "answer", "probability"}]}, at most max_mock_rules of them in max_mock_rules_bytes. When the
/// text is not that, an ErrorKind::invalid_input Error: its `where` names the rule ("rules[3]")
/// or the byte where the JSON is broken ("byte 17"), and is empty for the file as a whole.
///
///     auto rules = clef::parse_mock_rules(R"({"rules": []})");
///     if (!rules) std::cerr << rules.error().where << ": " << rules.error().message << "\n";
Result<std::vector<MockRule>> parse_mock_rules(const std::string& text);

/// Faults on demand, drawn per request from a seeded generator (the same seed, the same
/// requests fail).
struct MockFaults {
  /// Status → share of decision requests answered with that status's error body ({503, 0.05}).
  std::vector<std::pair<int, double>> fail_rates;
  /// Share of decision requests whose connection closes after the headers, with no body.
  double drop_rate = 0;
  /// Retry-After (seconds) on the 429 and 503 answers above.
  std::optional<int> retry_after_seconds;
  /// Every decision gets the daily-allocation 429 (Workers AI's code 4006).
  bool quota_exhausted = false;
  /// Decisions answered at once (Ollama answers OLLAMA_NUM_PARALLEL at a time); one more is
  /// answered 503 "server busy" at once, as an Ollama whose queue is full. 0: no limit.
  std::size_t capacity = 0;
  /// A token bucket of this many decisions a second (its burst: one second's worth); one over
  /// it is answered 429 with Retry-After: 1 (Workers AI's capacity code 3040). 0: no limit.
  double rate_limit = 0;
  /// Workers AI: once the neurons it measured (cf-ai-neurons, at $0.011 per 1,000) cost more
  /// than this many dollars, every decision gets AI Gateway's 429 "Spend limit exceeded" (code
  /// 2041, in its `error` array), as a gateway whose budget is spent. Those already admitted
  /// are answered. nullopt: no limit.
  std::optional<double> spend_limit_usd;
  /// The simulated model's flaws, for probes to find (clef eval --permute and --repeat).
  /// position_bias in [0, 1]: each choice's and score's distribution is pulled toward the option
  /// sent first, p' = (1 − bias)·p + bias·[1, 0, …, 0] (at 0.5 or more the first option always
  /// wins). A yes/no question, whose meanings have no order on the wire, is unchanged.
  double position_bias = 0;
  /// noise ≥ 0: each answer's probabilities are multiplied by exp(noise·z), z a standard normal
  /// drawn per request and option from the seed, then renormalised (yes/no: its log-odds move by
  /// noise·z), so the same request twice may get different answers.
  double noise = 0;
  std::uint64_t seed = 1;
};

/// A cassette's backend name for a profile ("ollama", "workers-ai", else "systemone").
const char* cassette_tag(MockProfile profile) noexcept;

class MockServer {
 public:
  /// Listens on 127.0.0.1:`port` (0: a free port, see port()). An Error when it cannot:
  /// ErrorKind::invalid_input for a port outside 0..65535, one it may not take, or one anything
  /// already listens on (the socket is not shared, no SO_REUSEPORT, so two servers never split
  /// one port's traffic); ErrorKind::connection_failed when the system has no socket or thread
  /// to give.
  ///
  ///     auto fixed = clef::MockServer::start(clef::MockProfile::workers_ai, 8787);
  ///     if (!fixed) {
  ///       std::cerr << "clef mock: error: " << fixed.error().message << "\n";
  ///       return 1;
  ///     }
  ///     std::cout << fixed->base_url() << "\n";
  static Result<MockServer> start(MockProfile profile, int port = 0);

  /// A server on a free port of 127.0.0.1, for tests. Taking an ephemeral loopback port fails
  /// only when the process has no file descriptor, thread or ephemeral port left, which no
  /// test can recover from: it then says why on stderr and aborts. start() reports it instead.
  explicit MockServer(MockProfile profile = MockProfile::ollama) noexcept;
  /// A moved-from server may only be destroyed or assigned to.
  MockServer(MockServer&& other) noexcept;
  MockServer& operator=(MockServer&& other) noexcept;
  /// Stops listening and waits for the requests in progress.
  ~MockServer();
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  int port() const { return m_port; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  /// Simulated model time before each answer.
  void set_latency(std::chrono::milliseconds latency);
  /// Models this server has pulled / serves (Ollama: others get 404). Default: clef-flash. As
  /// Ollama does, the Ollama profile names a model without a tag NAME:latest ("clef" is listed
  /// in /api/tags, and served, as "clef:latest"; a request may say either).
  void set_models(std::vector<std::string> models);
  /// Called for every request before simulation; a value replaces the simulated response.
  /// `call` counts requests from 0.
  void set_script(std::function<std::optional<MockReply>(const MockRequest&, int call)> script);
  /// The digest /api/tags reports for `name` ("clef-flash:latest"), as when the tag is re-pulled.
  void set_model_digest(const std::string& name, std::string digest);
  /// Answers from rules before the default deterministic model (see MockRule).
  void set_rules(std::vector<MockRule> rules);
  void set_faults(MockFaults faults);
  /// Workers AI's token check (the Workers AI profile only). By default (nullopt) any Bearer
  /// token that is not blank is accepted; set to a token, only `Authorization: Bearer TOKEN` is.
  /// Either way a request with none gets Workers AI's 401 (code 10000, "Authentication error").
  /// ErrorKind::invalid_input for a blank token, or for a token on another profile (the other
  /// servers it imitates check none).
  ///
  ///     clef::MockServer workers(clef::MockProfile::workers_ai);
  ///     if (!workers.set_token("s3cret")) return 1;  // "Bearer other" now gets the 401
  Status set_token(std::optional<std::string> token);
  /// Answer decisions no rule covers from this cassette (`clef ask --record`'s file) before
  /// the deterministic default. The cassette's Error (make_replay_transport's) when it cannot
  /// be read.
  Status set_cassette(const std::string& path);
  /// Append each request as a JSON line (method, path, body, headers without Authorization).
  /// ErrorKind::invalid_input when the file cannot be opened for appending.
  Status set_log(const std::string& path);
  /// Ollama's /api/version answer.
  void set_version(std::string version);
  /// workers-ai: the name of the one AI Gateway the account has ("default" unless set). The
  /// profile serves the gateway's URL form too, /v1/ACCOUNT/GATEWAY/workers-ai/MODEL, with the
  /// gateway's cache (cf-aig-cache-ttl, cf-aig-skip-cache → cf-aig-cache-status HIT/MISS), a
  /// cf-aig-log-id on every answer, and its 400 (code 2001) for any other name.
  void set_gateway(std::string name);
  /// workers-ai: make the gateway an Authenticated Gateway, taking only
  /// `cf-aig-authorization: Bearer TOKEN` (others get 401, code 2009); nullopt: any request.
  void set_gateway_token(std::optional<std::string> token);

  /// The last decision requests received, oldest first: at most set_request_log_limit() of them
  /// (1000 unless set) holding at most 256 MiB of bodies, so a long-running server does not grow
  /// with its traffic. A body the profile refused as too large (413) is not kept (its `body` is
  /// empty); a body past the 64 MiB request cap is refused unread and is not listed at all.
  std::vector<MockRequest> requests() const;
  /// How many requests requests() keeps (0: none). Older ones are dropped first.
  void set_request_log_limit(std::size_t requests);
  /// Every decision request received, including those requests() no longer holds.
  int request_count() const;
  /// How long a client has to send one request whole (request line, headers and body), from
  /// its first byte; default 10 s. A slower client's connection is closed, so slow or stalled
  /// clients cannot hold the server. Each connection is served by its own thread (up to
  /// set_max_connections() at once), so they cannot starve other clients in the meantime either.
  void set_request_deadline(std::chrono::milliseconds deadline);
  /// Connections served at once (default 1024); more wait for a thread. A load test of 2,000
  /// requests in flight against --latency needs 2,000.
  void set_max_connections(std::size_t connections);

 private:
  explicit MockServer(std::unique_ptr<mock_detail::ServerState> state) noexcept;

  std::unique_ptr<mock_detail::ServerState> m_state;
  int m_port = 0;
};

/// A script for MockServer::set_script: the first attempt of every `every`-th distinct request
/// body fails, in turn, with 429 (Retry-After: 0), 503 (Retry-After: 0), and a 200 whose body is
/// cut short; the retry gets through. `faults` counts the failures injected.
std::function<std::optional<MockReply>(const MockRequest&, int)> first_attempt_faults(
    int every, std::shared_ptr<std::atomic<int>> faults);

/// A free port on 127.0.0.1 to listen on yourself (bound, then closed: another process may take
/// it before you do; MockServer::start(profile, port) then fails).
int unused_port();

/// A port on 127.0.0.1 where every connection is refused: bound and never listening, and held
/// for the rest of the process, so no other server can take it meanwhile ("is the server
/// down?" tests).
int refusing_port();

}  // namespace clef
