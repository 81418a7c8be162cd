// The batch engine's judgement of what a server said: another model's answer is not the asked
// model's, a host whose answers are invalid is worked around, a lone 503 costs one item a retry
// (not the host its pace), a pause costs no CPU, --rate waits before items and not after them,
// and a refusal that outlasts the throttle budget is written rate_limited.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "instrumented.hpp"
#include "wait_until.hpp"
#include "wire/model_match.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::Scripted;
using namespace std::chrono_literals;

std::vector<clef::DecisionRequest> tickets(int n) {
  std::vector<clef::DecisionRequest> requests;
  for (int i = 0; i < n; ++i) {
    clef::DecisionRequest r;
    r.state = clef::State::text("ticket " + std::to_string(i));
    r.questions = {clef::Question::yes_no("urgent", "Is it urgent?")};
    requests.push_back(std::move(r));
  }
  return requests;
}

clef::Client client_at(const std::string& base_url, int attempts = 3) {
  clef::ClientOptions options;
  options.base_url = base_url;
  options.retry.max_attempts = attempts;
  options.retry.initial_backoff = 1ms;
  options.retry.max_backoff = 2ms;
  return clef::Client::create(options).value();
}

struct Outcome {
  std::map<std::size_t, clef::Result<clef::Decision>> results;
  clef::BatchSummary summary;
  int pauses = 0;
};

Outcome run_over(const std::vector<clef::Client>& hosts,
                 const std::vector<clef::DecisionRequest>& requests, clef::BatchOptions options) {
  Outcome run;
  std::size_t next = 0;
  options.on_pause = [&](std::chrono::system_clock::time_point, const clef::Error&) {
    ++run.pauses;
  };
  run.summary = clef::run_batch(
      hosts,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        run.results.emplace(index, std::move(result));
      },
      options);
  return run;
}

std::string answer_from(const std::string& model, double p_true) {
  return R"({"model":")" + model + R"(","answers":{"urgent":{"type":"noul","noul":)" +
         std::to_string(p_true) + "}}}";
}

TEST(ModelMatch, TheFormsServersReportAreTheModelAskedForAndNoOtherIs) {
  using clef::detail::same_model;
  for (const auto& [asked, reported] : std::vector<std::pair<std::string, std::string>>{
           {"clef-flash", "clef-flash"},
           {"clef-flash", "clef-flash:latest"},
           {"clef-flash:latest", "clef-flash"},
           {"CLEF-FLASH", "clef-flash"},
           {"@cf/cloudflare/clef-flash", "clef-flash"},
           {"registry.ollama.ai/library/nimble:latest", "nimble"},
           {"laya", "laya:en"},
           {"jev-latest", "jev-1.13.0"},
           {"jev-preview", "jev-1.14.0"},
           {"clef-flash", ""},
       }) {
    EXPECT_TRUE(same_model(asked, reported)) << asked << " / " << reported;
  }
  for (const auto& [asked, reported] : std::vector<std::pair<std::string, std::string>>{
           {"clef-flash", "some-other-model"},
           {"clef", "clef-flash"},
           {"clef-flash", "clef"},
           {"clef-flash:9b", "clef-flash:27b"},
           {"@cf/cloudflare/clef", "clef-flash"},
           {"jev-latest", "nimble"},
           {"jev-1.13.0", "jev-1.14.0"},
       }) {
    EXPECT_FALSE(same_model(asked, reported)) << asked << " / " << reported;
  }
  // On Ollama a tag is a model: clef-flash is clef-flash:latest and nothing else.
  EXPECT_TRUE(same_model("clef-flash", "clef-flash:latest", true));
  EXPECT_TRUE(same_model("clef-flash:latest", "clef-flash", true));
  EXPECT_TRUE(same_model("clef-flash:q4", "CLEF-FLASH:Q4", true));
  EXPECT_FALSE(same_model("clef-flash", "clef-flash:q4", true));
  EXPECT_FALSE(same_model("clef-flash:q4", "clef-flash", true));
  EXPECT_FALSE(same_model("clef-flash:7b", "clef-flash:latest", true));
}

// A server's model name goes into every answer's problem: a name of megabytes is cut there, at
// a character's boundary (it was copied whole into each: 16 MB x 64 answers, a gigabyte).
TEST(BatchEngine, AnOtherModelsLongNameIsCutInEachAnswersProblem) {
  clef::Decision decision;
  decision.model = std::string(199, 'm') + "é" + std::string(1'000'000, 'n');
  decision.answers.resize(64);
  clef::detail::mark_other_model(decision, "clef-flash", true);
  const std::string expected =
      "answered by the model \"" + std::string(199, 'm') + "…\", not \"clef-flash\" as asked";
  for (const auto& answer : decision.answers) {
    EXPECT_EQ(answer.status, clef::AnswerStatus::invalid);
    EXPECT_EQ(answer.problem, expected);
  }
  EXPECT_EQ(decision.model.size(), 199u + 2u + 1'000'000u) << "the model itself is kept whole";
}

TEST(BatchEngine, AnotherModelsAnswerIsInvalidAndItsHostIsWorkedAround) {
  FakeServer right, wrong;
  wrong.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, answer_from("some-other-model", 0.9), "application/json"};
  });
  // One host: the answer comes back, every answer invalid, naming both models.
  auto alone = client_at(wrong.base_url()).decide(tickets(1)[0]);
  ASSERT_TRUE(alone) << alone.error().to_string();
  EXPECT_EQ(alone->answers[0].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(alone->answers[0].problem,
            "answered by the model \"some-other-model\", not \"clef-flash\" as asked");
  // Several: the other host answers every item, the wrong one is set aside.
  clef::BatchOptions options;
  options.concurrency = 4;
  const auto run =
      run_over({client_at(right.base_url()), client_at(wrong.base_url())}, tickets(60), options);
  ASSERT_EQ(run.results.size(), 60u);
  for (const auto& [index, result] : run.results) {
    ASSERT_TRUE(result) << result.error().to_string();
    EXPECT_EQ(result->answers[0].status, clef::AnswerStatus::ok) << index;
    EXPECT_EQ(result->host, right.base_url());
  }
  EXPECT_GE(run.summary.hosts[1].ejections, 1u);
  EXPECT_LT(wrong.request_count(), 20);
}

TEST(BatchEngine, AHostWhoseAnswersAreInvalidIsSetAsideAndItsItemsMove) {
  FakeServer good, broken;
  broken.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    // P(true) 1.8: no probability at all.
    return Scripted{200, answer_from("clef-flash", 1.8), "application/json"};
  });
  good.set_latency(2ms);
  clef::BatchOptions options;
  options.concurrency = 8;
  const auto run =
      run_over({client_at(broken.base_url()), client_at(good.base_url())}, tickets(200), options);
  ASSERT_EQ(run.results.size(), 200u);
  for (const auto& [index, result] : run.results) {
    ASSERT_TRUE(result) << result.error().to_string();
    EXPECT_EQ(result->answers[0].status, clef::AnswerStatus::ok) << index;
  }
  EXPECT_GT(run.summary.hosts[0].moved, 0u);
  EXPECT_GE(run.summary.hosts[0].ejections, 1u);
  EXPECT_EQ(good.request_count(), 200);
}

TEST(BatchEngine, ALoneRefusalCostsItsItemARetryNotTheHostAPause) {
  // Every 25th request answered 503 (or 429) with Retry-After: 0, nothing else said: bad luck,
  // not load.
  std::atomic<int> refused{0};  // before the server: its threads outlive what they read
  FakeServer server;
  server.set_script([&](const clef::MockRequest&, int call) -> std::optional<Scripted> {
    if (call % 25 != 24) return std::nullopt;
    const int status = ++refused % 2 ? 503 : 429;
    return Scripted{status, R"({"error":"try again"})", "application/json", {{"Retry-After", "0"}}};
  });
  server.set_latency(2ms);
  clef::BatchOptions options;
  options.concurrency = 8;
  const auto run = run_over({client_at(server.base_url())}, tickets(300), options);
  ASSERT_EQ(run.results.size(), 300u);
  for (const auto& [index, result] : run.results) ASSERT_TRUE(result) << index;
  EXPECT_GE(refused.load(), 10);
  EXPECT_EQ(run.summary.throttled, static_cast<std::size_t>(refused.load()));
  EXPECT_EQ(run.pauses, 0);  // never a pause for the host

  // Refusals that cluster are load: the host pauses (or is cut) as before.
  FakeServer busy;
  busy.set_script([](const clef::MockRequest&, int call) -> std::optional<Scripted> {
    if (call < 8 || call >= 16) return std::nullopt;
    return Scripted{503, R"({"error":"try again"})", "application/json", {{"Retry-After", "0"}}};
  });
  options.concurrency = 1;  // one at a time: the refusals come one after another
  const auto clustered = run_over({client_at(busy.base_url())}, tickets(30), options);
  EXPECT_EQ(clustered.results.size(), 30u);
  EXPECT_GE(clustered.pauses, 1);
}

TEST(BatchEngine, ARefusalThatOutlastsTheThrottleBudgetIsRateLimited) {
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{503, R"({"error":"server busy"})", "application/json", {{"Retry-After", "0"}}};
  });
  clef::BatchOptions options;
  options.concurrency = 2;
  options.throttle_budget = 300ms;
  const auto run = run_over({client_at(server.base_url())}, tickets(3), options);
  ASSERT_EQ(run.results.size(), 3u);
  for (const auto& [index, result] : run.results) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, clef::ErrorKind::rate_limited) << result.error().to_string();
    EXPECT_EQ(result.error().http_status, 503);
    EXPECT_NE(result.error().message.find("throttle budget"), std::string::npos);
  }
}

TEST(BatchEngine, NoWaitPassesMaxRetryAfterNorTheThrottleBudget) {
  // Refused every time with Retry-After: 0: the backoff grows, but never past
  // --max-retry-after, and an item whose next wait would pass its budget ends at once.
  std::mutex mutex;  // before the server: its threads outlive what they read
  std::vector<std::chrono::steady_clock::time_point> arrivals;
  FakeServer server;
  server.set_script([&](const clef::MockRequest&, int) -> std::optional<Scripted> {
    std::lock_guard<std::mutex> lock(mutex);
    arrivals.push_back(std::chrono::steady_clock::now());
    return Scripted{429, R"({"error":"slow down"})", "application/json", {{"Retry-After", "0"}}};
  });
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_retry_after = 200ms;
  const auto client = clef::Client::create(options).value();
  clef::BatchOptions batch;
  batch.concurrency = 1;
  batch.throttle_budget = 2s;
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_over({client}, tickets(1), batch);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results.begin()->second.error().kind, clef::ErrorKind::rate_limited);
  EXPECT_LT(took, 2s + 1500ms);
  std::lock_guard<std::mutex> lock(mutex);
  // Tried again and again, 200 ms apart at most: at least 5 times in the 2 s budget, where the
  // uncapped backoff (0.5 s doubling) leaves room for 3. The gaps' bound leaves a loaded machine
  // 700 ms of its own; the count is what a missing cap cannot meet.
  ASSERT_GE(arrivals.size(), 5u);
  for (std::size_t i = 1; i < arrivals.size(); ++i)
    EXPECT_LT(arrivals[i] - arrivals[i - 1], 900ms) << "between attempts " << i - 1 << " and " << i;
}

/// CPU seconds (user + system) this process has used.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

TEST(BatchEngine, APauseWithItemsWaitingCostsNoCpu) {
  // The first 8 requests are refused with Retry-After: 3: the host pauses 3 s with 8 items
  // waiting. The engine must sleep through it, not spin on a deadline in the past.
  std::atomic<int> calls{0};  // before the server: its threads outlive what they read
  std::atomic<double> cpu_at_pause{-1}, cpu_after_pause{-1};
  FakeServer server;
  server.set_script([&](const clef::MockRequest&, int) -> std::optional<Scripted> {
    const int call = calls++;
    if (call == 7) cpu_at_pause = process_cpu_seconds();
    if (call == 8) cpu_after_pause = process_cpu_seconds();
    if (call < 8) {
      return Scripted{
          503, R"({"error":"server busy"})", "application/json", {{"Retry-After", "3"}}};
    }
    return std::nullopt;
  });
  clef::BatchOptions options;
  options.concurrency = 8;
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_over({client_at(server.base_url())}, tickets(8), options);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(run.results.size(), 8u);
  EXPECT_GE(took, 2900ms);  // the pause was honoured
  ASSERT_GE(cpu_at_pause.load(), 0.0);
  ASSERT_GE(cpu_after_pause.load(), 0.0);
  // Under 1% of a core over the 3 s (the whole process: engine, loop and mock threads); under a
  // sanitizer, whose instrumentation multiplies every wake-up's cost, under 10% (a spin is 100%).
  const double limit = clef::testing::instrumented_build ? 0.3 : 0.03;
  EXPECT_LT(cpu_after_pause - cpu_at_pause, limit)
      << (cpu_after_pause - cpu_at_pause) << " s of CPU during a 3 s pause";
}

TEST(BatchEngine, RateWaitsBeforeItemsNotAfterTheLast) {
  FakeServer server;
  clef::BatchOptions options;
  options.max_requests_per_second = 0.05;  // one every 20 s
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_over({client_at(server.base_url())}, tickets(1), options);
  EXPECT_EQ(run.results.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);  // not 20 s after the only item
  // A rate the clock cannot count is no reason to send at full speed: capped at one a day.
  options.max_requests_per_second = 1e-12;
  std::atomic<bool> stop{false};
  options.should_stop = [&] { return stop.load(); };
  // Stopped as soon as this run's first request arrives: a rate taken for "no cap" would have
  // sent the other two at once, before the stop could be seen.
  std::thread stopper([&] {
    while (server.request_count() < 2) std::this_thread::sleep_for(1ms);
    stop = true;
  });
  const auto slow = run_over({client_at(server.base_url())}, tickets(3), options);
  stopper.join();
  EXPECT_EQ(server.request_count(), 2);  // the first of this run only
  EXPECT_EQ(slow.summary.succeeded, 1u);
}

TEST(BatchEngine, ARefusalThatLandsAsTheBatchStopsIsNotDoneRatherThanFailed) {
  // Four items in flight when the batch is told to stop, each then refused with a 503: they would
  // have been sent again, so they come back cancelled ("not done", for --resume), not as the
  // server's 503 counted as a failure.
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{503, R"({"error":"busy"})", "application/json", {}, 300ms};
  });
  auto client = client_at(server.base_url());
  const auto requests = tickets(20);
  std::size_t next = 0;
  std::atomic<bool> stop{false};
  std::map<std::size_t, clef::ErrorKind> kinds;
  clef::BatchOptions options;
  options.concurrency = 4;
  options.should_stop = [&] { return stop.load(); };
  std::thread stopper([&] {
    clef::testing::wait_until([&] { return server.request_count() >= 4; }, "four in flight");
    stop = true;
  });
  const auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        kinds[index] = result ? clef::ErrorKind::invalid_response : result.error().kind;
      },
      options);
  stopper.join();
  EXPECT_TRUE(summary.stopped);
  EXPECT_EQ(summary.throttled, static_cast<std::size_t>(server.request_count()))
      << "each refusal is still counted as one";
  ASSERT_FALSE(kinds.empty());
  for (const auto& [index, kind] : kinds) EXPECT_EQ(kind, clef::ErrorKind::cancelled) << index;
}

}  // namespace

// A loop's handler delivers its item's result and only then lets go of what it holds: the
// client, a cache stage that writes its last pack when it goes. run_batch returns once the
// loop has come back from the last handler, so a caller that exits next loses nothing (a
// `clef batch --cache` on a busy machine lost its last pack so). Here a transport's handler
// works on for 300 ms after delivering, as a stage's last write would.
TEST(BatchEngine, ReturnsOnlyOnceTheLoopHasComeBackFromItsLastHandler) {
  FakeServer server;
  struct Lingering final : clef::AsyncTransport {
    std::shared_ptr<clef::AsyncTransport> inner = clef::make_curl_loop();
    std::atomic<int> came_back{0};
    void start(clef::HttpRequest request, clef::ResponseHandler done) override {
      inner->start(std::move(request),
                   [this, done = std::move(done)](clef::Result<clef::HttpResponse> response) {
                     done(std::move(response));
                     std::this_thread::sleep_for(300ms);  // the handler's own work, after
                     ++came_back;
                   });
    }
    void after(std::chrono::milliseconds delay,
               std::function<void(bool shutting_down)> task) override {
      inner->after(delay, std::move(task));
    }
    bool running_here() const override { return inner->running_here(); }
  };
  auto lingering = std::make_shared<Lingering>();
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.async_transport = lingering;
  const auto client = clef::Client::create(options).value();
  clef::BatchOptions batch;
  batch.concurrency = 1;
  const auto run = run_over({client}, tickets(3), batch);
  ASSERT_EQ(run.results.size(), 3u);
  EXPECT_EQ(lingering->came_back.load(), 3) << "run_batch returned inside the last handler";
}
