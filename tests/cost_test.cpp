// What a decision cost: Workers AI's measured neurons (the cf-ai-neurons header) beat a figure in
// the answer (usage.neurons, usage.cost), which beats tokens × a price; an override replaces the
// built-in table; a cache hit spent nothing; unknown stays unknown, never 0 — in the Decision
// and in its JSON line, read back as hostile text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "clef/clef.hpp"
#include "clef/mock.hpp"

namespace {

clef::DecisionRequest refund_ticket() {
  clef::DecisionRequest request;
  request.state = clef::State::text("I was charged twice. Please refund the extra payment.");
  request.questions = {clef::Question::yes_no("refund", "Asks for a refund?")};
  return request;
}

/// A server of `profile` whose every answer is `body` with `headers`.
clef::MockServer answering(clef::MockProfile profile, std::string body,
                           std::vector<std::pair<std::string, std::string>> headers = {}) {
  clef::MockServer server(profile);
  server.set_script([body, headers](const clef::MockRequest&, int) {
    clef::MockReply reply;
    reply.body = body;
    reply.headers = headers;
    return std::optional<clef::MockReply>(reply);
  });
  return server;
}

clef::ClientOptions options_for(clef::Backend backend, const clef::MockServer& server) {
  clef::ClientOptions options;
  options.backend = backend;
  options.base_url = server.base_url() + (backend == clef::Backend::workers_ai ? "/client/v4" : "");
  options.account_id = "acc9";
  options.api_token = "test-token";
  options.retry.max_attempts = 1;
  return options;
}

clef::Cost cost_of(const clef::ClientOptions& options) {
  auto decision = clef::Client::create(options).value().decide(refund_ticket());
  EXPECT_TRUE(decision.ok()) << decision.error().to_string();
  return decision ? decision->cost : clef::Cost{};
}

std::string workers_body(const std::string& usage) {
  return R"({"result":{"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.9}},)"
         R"("usage":)" +
         usage + R"(},"success":true,"errors":[],"messages":[]})";
}

constexpr double kNeuron = 0.011 / 1000.0;

TEST(Cost, TheHeaderBeatsTheBodyWhichBeatsTokensTimesThePrice) {
  const std::string usage = R"({"input_tokens":1000000,"output_tokens":0,"neurons":20})";
  auto both =
      answering(clef::MockProfile::workers_ai, workers_body(usage), {{"cf-ai-neurons", "7.5"}});
  const clef::Cost header = cost_of(options_for(clef::Backend::workers_ai, both));
  EXPECT_EQ(header.source, clef::CostSource::header);
  ASSERT_TRUE(header.usd);
  EXPECT_NEAR(*header.usd, 7.5 * kNeuron, 1e-12);
  EXPECT_EQ(header.neurons, 7.5);

  auto body = answering(clef::MockProfile::workers_ai, workers_body(usage));
  const clef::Cost measured = cost_of(options_for(clef::Backend::workers_ai, body));
  EXPECT_EQ(measured.source, clef::CostSource::body);
  EXPECT_NEAR(measured.usd.value_or(-1), 20 * kNeuron, 1e-12);

  // Nothing measured: a million input tokens at the table's $0.09 per million.
  auto tokens = answering(clef::MockProfile::workers_ai,
                          workers_body(R"({"input_tokens":1000000,"output_tokens":0})"));
  const clef::Cost computed = cost_of(options_for(clef::Backend::workers_ai, tokens));
  EXPECT_EQ(computed.source, clef::CostSource::computed);
  EXPECT_NEAR(computed.usd.value_or(-1), 0.09, 1e-12);
}

TEST(Cost, AHeaderThatIsNotANumberIsNotBelieved) {
  for (const char* bad : {"", "abc", "-3", "1e300", "nan", "inf", "5 6", "0x10"}) {
    auto server = answering(clef::MockProfile::workers_ai,
                            workers_body(R"({"input_tokens":1000000,"output_tokens":0})"),
                            {{"cf-ai-neurons", bad}});
    const clef::Cost cost = cost_of(options_for(clef::Backend::workers_ai, server));
    EXPECT_EQ(cost.source, clef::CostSource::computed) << "cf-ai-neurons: " << bad;
    EXPECT_FALSE(cost.neurons.has_value()) << bad;
  }
}

TEST(Cost, UnknownStaysUnknownAndAPriceOverrideComputesIt) {
  const std::string body =
      R"({"model":"house-model","answers":{"refund":{"type":"noul","noul":0.9}},)"
      R"("usage":{"input_tokens":2000,"output_tokens":500}})";
  auto server = answering(clef::MockProfile::ollama, body);
  auto options = options_for(clef::Backend::systemone, server);
  options.model = "house-model";
  const clef::Cost unknown = cost_of(options);
  EXPECT_FALSE(unknown.known());
  EXPECT_EQ(unknown.source, clef::CostSource::unknown);

  options.prices["house-model"] = clef::Price{3.0, 15.0};  // per million: 2000 in, 500 out
  const clef::Cost priced = cost_of(options);
  EXPECT_EQ(priced.source, clef::CostSource::computed);
  EXPECT_NEAR(priced.usd.value_or(-1), (2000 * 3.0 + 500 * 15.0) / 1e6, 1e-12);

  // A dollar figure in the answer (OpenRouter's usage.cost) beats the override.
  auto reporting =
      answering(clef::MockProfile::ollama,
                R"({"model":"house-model","answers":{"refund":{"type":"noul","noul":0.9}},)"
                R"("usage":{"input_tokens":2000,"output_tokens":500,"cost":0.0042}})");
  options.base_url = reporting.base_url();
  const clef::Cost reported = cost_of(options);
  EXPECT_EQ(reported.source, clef::CostSource::body);
  EXPECT_NEAR(reported.usd.value_or(-1), 0.0042, 1e-15);
}

TEST(Cost, TheTablesRowsAndOverridesMatchModelNames) {
  const std::map<std::string, clef::Price> none;
  EXPECT_NEAR(clef::price_for(clef::Backend::workers_ai, "@cf/cloudflare/clef-flash", none)
                  ->input_per_million,
              0.09, 1e-12);
  EXPECT_NEAR(
      clef::price_for(clef::Backend::systemone, "typesafe/jev-1.14", none)->input_per_million,
      0.042, 1e-12);
  EXPECT_EQ(clef::price_for(clef::Backend::ollama, "anything:latest", none)->input_per_million, 0);
  EXPECT_FALSE(clef::price_for(clef::Backend::openai, "gpt-6-luna", none).has_value());
  EXPECT_FALSE(clef::price_for(clef::Backend::systemone, "clef-flash", none).has_value());
  const std::map<std::string, clef::Price> mine = {{"clef-flash", {1.0, 2.0}}};
  EXPECT_EQ(clef::price_for(clef::Backend::workers_ai, "@cf/cloudflare/clef-flash", mine)
                ->input_per_million,
            1.0);
  for (const auto& row : clef::built_in_prices()) {
    EXPECT_EQ(row.as_of.size(), 10u) << row.model_prefix << ": a date, YYYY-MM-DD";
    EXPECT_FALSE(row.source.empty()) << row.model_prefix;
  }
}

TEST(Cost, ACacheHitSpentNothing) {
  auto server =
      answering(clef::MockProfile::workers_ai,
                workers_body(R"({"input_tokens":10,"output_tokens":0})"), {{"cf-ai-neurons", "2"}});
  auto options = options_for(clef::Backend::workers_ai, server);
  clef::CacheOptions cache;
  cache.directory = ::testing::TempDir() + "cost_cache";
  std::filesystem::remove_all(cache.directory);
  options.async_transport =
      clef::make_caching_transport(clef::make_curl_loop(), cache, options.backend).value();
  EXPECT_EQ(cost_of(options).source, clef::CostSource::header);
  const clef::Cost again = cost_of(options);
  EXPECT_EQ(again.source, clef::CostSource::cached);
  EXPECT_EQ(again.usd, 0.0);
}

TEST(Cost, ItsJsonRoundTripsAndHostileJsonIsUnknown) {
  const clef::Cost measured{0.0000055, clef::CostSource::header, 0.5};
  const auto json = clef::to_json(measured);
  EXPECT_EQ(clef::dump_json(json), R"({"usd":5.5e-06,"source":"header","neurons":0.5})");
  const clef::Cost back = clef::cost_from_json(json);
  EXPECT_EQ(back.usd, measured.usd);
  EXPECT_EQ(back.source, measured.source);
  EXPECT_EQ(back.neurons, measured.neurons);
  EXPECT_EQ(clef::dump_json(clef::to_json(clef::Cost{})), R"({"usd":null,"source":"unknown"})");
  for (const char* hostile :
       {R"({"usd":-1,"source":"header"})", R"({"usd":"0.1","source":"header"})",
        R"({"usd":0.1,"source":"guessed"})", R"({"usd":0.1})", R"({"usd":0.1,"source":"unknown"})",
        R"([0.1])", R"("free")", R"({"usd":1e400,"source":"body"})"}) {
    const auto parsed = nlohmann::ordered_json::parse(hostile, nullptr, false);
    const clef::Cost cost = clef::cost_from_json(parsed);
    EXPECT_FALSE(cost.known()) << hostile;
    EXPECT_EQ(cost.source, clef::CostSource::unknown) << hostile;
  }
}

}  // namespace

namespace {

/// `count` tickets of different lengths (ticket i repeats its sentence i % 5 + 1 times).
std::vector<clef::DecisionRequest> tickets_of_many_sizes(int count) {
  std::vector<clef::DecisionRequest> requests;
  for (int i = 0; i < count; ++i) {
    clef::DecisionRequest request = refund_ticket();
    std::string text = "Ticket " + std::to_string(i) + ":";
    for (int k = 0; k <= i % 5; ++k) text += " I was charged twice, please refund me.";
    request.state = clef::State::text(text);
    requests.push_back(request);
  }
  return requests;
}

clef::RequestSource source_of(const std::vector<clef::DecisionRequest>& requests,
                              std::size_t& next) {
  return [&requests, &next]() -> std::optional<clef::Result<clef::DecisionRequest>> {
    if (next == requests.size()) return std::nullopt;
    return clef::Result<clef::DecisionRequest>(requests[next++]);
  };
}

/// A System One server that bills each request `dollars(body size)` in usage.cost, and keeps
/// what it received and billed.
struct SizeBilling {
  explicit SizeBilling(std::function<double(std::size_t)> dollars)
      : server(clef::MockProfile::ollama) {
    server.set_script([this, dollars](const clef::MockRequest& request, int) {
      const double usd = dollars(request.body.size());
      {
        std::lock_guard<std::mutex> lock(mutex);
        billed.emplace_back(usd, static_cast<double>(request.body.size()));
      }
      clef::MockReply reply;
      reply.body = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.9}},)"
                   R"("usage":{"input_tokens":100,"output_tokens":0,"cost":)" +
                   std::to_string(usd) + "}}";
      return std::optional<clef::MockReply>(reply);
    });
  }
  /// What was billed so far, and forgets it.
  std::vector<std::pair<double, double>> take() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::exchange(billed, {});
  }
  std::mutex mutex;
  std::vector<std::pair<double, double>> billed;  ///< (dollars, body bytes) per request.
  clef::MockServer server;  ///< Last: destroyed first, so no request lands on what is gone.
};

}  // namespace

// Costs that follow the body's size exactly are extrapolated exactly, whichever items the sample
// took: 12 of 40 decided, nothing else sent, and the estimate equals what all 40 cost.
TEST(Estimate, ACostThatFollowsSizeIsExtrapolatedExactly) {
  SizeBilling billing([](std::size_t bytes) { return static_cast<double>(bytes) * 1e-6; });
  const auto client =
      clef::Client::create(options_for(clef::Backend::systemone, billing.server)).value();
  const auto requests = tickets_of_many_sizes(40);
  double all_bytes = 0;
  for (const auto& request : requests)
    all_bytes += static_cast<double>(client.request_body(request)->size());
  std::size_t next = 0;
  clef::EstimateOptions options;
  options.sample = 12;
  const clef::CostEstimate estimate =
      clef::estimate_cost(client, source_of(requests, next), options);
  EXPECT_EQ(billing.server.request_count(), 12);
  EXPECT_EQ(estimate.items, 40u);
  EXPECT_EQ(estimate.sampled, 12u);
  EXPECT_EQ(estimate.priced, 12u);
  ASSERT_TRUE(estimate.usd);
  // A body's bytes x 1e-6 has six decimals, as usage.cost carries it: the fit is exact, and the
  // true sum inside the interval however its additions round (the hostile pass found it 1e-16
  // outside a zero-width one).
  EXPECT_NEAR(*estimate.usd, all_bytes * 1e-6, 1e-12);
  EXPECT_LE(estimate.low_usd, all_bytes * 1e-6);
  EXPECT_GE(estimate.high_usd, all_bytes * 1e-6);
}

// The estimate and its 95 % interval, computed here again from what the server billed: the
// largest quarter of the sample (2 of 8) counted as it is, a fee-plus-per-byte line fitted to the
// other 6 by least squares and extrapolated to the other 28 items, Student's t at 4 degrees of
// freedom; the same seed takes the same sample; a sample as large as the input is exact.
TEST(Estimate, TheIntervalIsARegressionsOnTheRestAndTheSeedFixesTheSample) {
  SizeBilling billing([](std::size_t bytes) { return bytes % 3 == 0 ? 0.004 : 0.001; });
  const auto client =
      clef::Client::create(options_for(clef::Backend::systemone, billing.server)).value();
  const auto requests = tickets_of_many_sizes(30);
  std::vector<double> sizes;
  for (const auto& request : requests)
    sizes.push_back(static_cast<double>(client.request_body(request)->size()));
  std::sort(sizes.rbegin(), sizes.rend());
  std::size_t next = 0;
  clef::EstimateOptions options;
  options.sample = 8;
  const clef::CostEstimate first = clef::estimate_cost(client, source_of(requests, next), options);
  ASSERT_TRUE(first.usd);
  std::vector<std::pair<double, double>> sample = billing.take();
  ASSERT_EQ(sample.size(), 8u);
  std::sort(sample.begin(), sample.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  EXPECT_EQ(sample[0].second, sizes[0]);  // the two largest are always decided
  EXPECT_EQ(sample[1].second, sizes[1]);
  const double exact = sample[0].first + sample[1].first;
  const std::vector<std::pair<double, double>> rest(sample.begin() + 2, sample.end());
  double rest_bytes = 0;
  for (std::size_t i = 2; i < sizes.size(); ++i) rest_bytes += sizes[i];
  double mx = 0, my = 0;
  for (const auto& [usd, size] : rest) mx += size / 6, my += usd / 6;
  double sxx = 0, sxy = 0;
  for (const auto& [usd, size] : rest)
    sxx += (size - mx) * (size - mx), sxy += (size - mx) * (usd - my);
  const double slope = sxy / sxx, fee = my - slope * mx;
  double squares = 0;
  for (const auto& [usd, size] : rest) squares += std::pow(usd - fee - slope * size, 2);
  const double total = exact + std::max(0.0, fee * 28 + slope * rest_bytes);
  const double half = 2.776 * std::sqrt(28.0 * 28.0 * (1 - 6.0 / 28.0) * (squares / 4) / 6);
  EXPECT_NEAR(*first.usd, total, 1e-12);
  EXPECT_NEAR(first.high_usd - *first.usd, half, 1e-12);
  EXPECT_NEAR(first.low_usd, std::max(exact, total - half), 1e-12);
  EXPECT_GT(half, 0);

  next = 0;
  const clef::CostEstimate again = clef::estimate_cost(client, source_of(requests, next), options);
  EXPECT_EQ(*again.usd, *first.usd);
  auto sorted = [](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(billing.take()), sorted(sample)) << "the same seed, the same items";

  next = 0;
  options.sample = 100;
  const clef::CostEstimate whole = clef::estimate_cost(client, source_of(requests, next), options);
  double all = 0;
  for (const auto& [usd, size] : billing.take()) all += usd;
  EXPECT_EQ(whole.sampled, 30u);
  EXPECT_NEAR(*whole.usd, all, 1e-12);
  EXPECT_NEAR(whole.low_usd, *whole.usd, *whole.usd * 1e-9 * 1.001);  // binary noise only
  EXPECT_NEAR(whole.high_usd, *whole.usd, *whole.usd * 1e-9 * 1.001);
  EXPECT_LT(whole.low_usd, whole.high_usd);
}

// A flat fee per request, and a few huge items among many small ones: the estimate holds (the
// fee is fitted, the huge items decided), where a cost-per-byte ratio was off by twice. With
// dedupe, repeated bodies are counted once.
TEST(Estimate, AFlatFeeAndAFewHugeItemsAreEstimatedAndRepeatsCountOnce) {
  auto dollars = [](std::size_t bytes) { return 0.001 + static_cast<double>(bytes) * 1e-7; };
  SizeBilling billing(dollars);
  const auto client =
      clef::Client::create(options_for(clef::Backend::systemone, billing.server)).value();
  std::vector<clef::DecisionRequest> requests = tickets_of_many_sizes(300);
  for (int i = 0; i < 300; i += 50)
    requests[static_cast<std::size_t>(i)].state =
        clef::State::text(std::string(20000, 'x') + std::to_string(i));
  double truth = 0;  // as the server bills it: usage.cost with six decimals
  for (const auto& request : requests)
    truth += std::stod(std::to_string(dollars(client.request_body(request)->size())));
  std::size_t next = 0;
  const clef::CostEstimate estimate = clef::estimate_cost(client, source_of(requests, next));
  billing.take();
  ASSERT_TRUE(estimate.usd);
  EXPECT_NEAR(*estimate.usd, truth, truth * 0.01);  // a cost-per-byte ratio alone misses the fee
  EXPECT_LE(estimate.low_usd, *estimate.usd);
  EXPECT_GE(estimate.high_usd, *estimate.usd);

  std::vector<clef::DecisionRequest> twice = requests;
  twice.insert(twice.end(), requests.begin(), requests.end());
  next = 0;
  clef::EstimateOptions options;
  options.dedupe = true;
  const clef::CostEstimate deduped = clef::estimate_cost(client, source_of(twice, next), options);
  EXPECT_EQ(deduped.items, 300u);
  EXPECT_EQ(deduped.repeats, 300u);
}

// No cost known: no estimate (nullopt, never $0); bad items are counted out; an empty input
// costs exactly nothing and sends nothing.
TEST(Estimate, UnknownCostsGiveNoEstimateAndBadItemsAreCountedOut) {
  auto silent =
      answering(clef::MockProfile::ollama,
                R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.9}},)"
                R"("usage":{"input_tokens":100,"output_tokens":0}})");
  auto options = options_for(clef::Backend::systemone, silent);
  options.model = "a-model-with-no-price";
  const auto client = clef::Client::create(options).value();
  std::vector<clef::Result<clef::DecisionRequest>> items = {
      clef::Result<clef::DecisionRequest>(refund_ticket()),
      clef::Result<clef::DecisionRequest>(clef::make_error(clef::ErrorKind::invalid_input, "bad")),
      clef::Result<clef::DecisionRequest>(refund_ticket())};
  std::size_t next = 0;
  const clef::CostEstimate unknown =
      clef::estimate_cost(client, [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == items.size()) return std::nullopt;
        return items[next++];
      });
  EXPECT_EQ(unknown.items, 2u);
  EXPECT_EQ(unknown.bad, 1u);
  EXPECT_EQ(unknown.unknown, 2u);
  EXPECT_FALSE(unknown.usd);

  const clef::CostEstimate empty = clef::estimate_cost(
      client, []() -> std::optional<clef::Result<clef::DecisionRequest>> { return std::nullopt; });
  ASSERT_TRUE(empty.usd);
  EXPECT_EQ(*empty.usd, 0.0);
  EXPECT_EQ(silent.request_count(), 2);
}
