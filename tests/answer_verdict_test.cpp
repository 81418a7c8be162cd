// A client's verdict on each answer reaches the stages the answer passed
// (store/answer_verdict.hpp): the cache on the loop keeps what the client accepted without reading
// the answer a second time. So the verdict must reach every stage, once; a stage must read for
// itself when no client judges (a handler of the caller's own) or when the client checks answers
// otherwise than it would; and the cache must keep nothing the client refused.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "store/answer_verdict.hpp"
#include "store/stage.hpp"
#include "ticket.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::Scripted;
using clef::testing::ticket;
using clef::testing::wait_until;

/// Answers nothing itself; counts what comes back through it.
class CountingStage final : public clef::detail::Stage {
 public:
  std::optional<clef::Result<clef::HttpResponse>> answer(const clef::HttpRequest&,
                                                         clef::detail::StageNote& note) override {
    note = std::array<std::uint64_t, 4>{1, 2, 3, 4};
    return std::nullopt;
  }
  void received(const clef::HttpRequest&, const clef::detail::StageNote& note,
                clef::Result<clef::HttpResponse>&, bool judged) override {
    ++received_count;
    if (judged) ++judged_count;
    if (!note) ++notes_lost;
  }
  void verdict(const clef::HttpRequest&, const clef::detail::StageNote& note,
               const clef::detail::AnswerVerdict& verdict) override {
    ++verdicts;
    if (verdict.whole) ++whole;
    if (!note) ++notes_lost;
    std::lock_guard<std::mutex> lock(mutex);
    last_body = verdict.response.body;
  }
  std::atomic<int> received_count{0}, judged_count{0}, verdicts{0}, whole{0}, notes_lost{0};
  std::mutex mutex;
  std::string last_body;
};

/// A yes/no answer to ticket()'s question, as Ollama writes it, said to come from `model`.
std::string urgent_answer(const std::string& model) {
  return R"({"model":")" + model + R"(","answers":{"urgent":{"type":"noul","noul":0.9}}})";
}

/// A decision with every question answered and valid.
bool accepted(const clef::Result<clef::Decision>& decision) {
  return decision && decision.value().all_ok();
}

bool from_cache(const clef::Result<clef::Decision>& decision) {
  return decision && decision.value().cached;
}

clef::ClientOptions options_for(const FakeServer& server) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = 1;
  return options;
}

TEST(AnswerVerdict, EveryStageAClientsAnswerPassedHearsItsVerdictOnce) {
  FakeServer server;
  auto outer = std::make_shared<CountingStage>();
  auto inner = std::make_shared<CountingStage>();
  auto options = options_for(server);
  options.async_transport =
      clef::detail::staged_loop(outer, clef::detail::staged_loop(inner, clef::make_curl_loop()));
  const auto client = clef::Client::create(options).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.decide(ticket(i))) << i;
  for (const auto* stage : {outer.get(), inner.get()}) {
    EXPECT_EQ(stage->received_count.load(), 3);
    EXPECT_EQ(stage->judged_count.load(), 3) << "a client's handler was not told from another";
    EXPECT_EQ(stage->verdicts.load(), 3);
    EXPECT_EQ(stage->whole.load(), 3);
  }
  // An answer the client refuses (not JSON, a probability past 1) and an HTTP error: judged, not
  // whole.
  server.set_script([](const clef::MockRequest&, int call) -> std::optional<Scripted> {
    if (call == 0) return Scripted{200, "<html>Sign in to the hotel Wi-Fi</html>", "text/html"};
    if (call == 1)
      return Scripted{200, R"({"model":"clef-flash","answers":{"urgent":{"type":"noul",)"
                           R"("noul":1.7}}})"};
    return Scripted{503, R"({"error":"busy"})"};
  });
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(accepted(client.decide(ticket(i)))) << i;
  for (const auto* stage : {outer.get(), inner.get()}) {
    EXPECT_EQ(stage->verdicts.load(), 6);
    EXPECT_EQ(stage->whole.load(), 3);
    EXPECT_EQ(stage->notes_lost.load(), 0);
  }
  std::lock_guard<std::mutex> lock(outer->mutex);
  EXPECT_EQ(outer->last_body, R"({"error":"busy"})") << "the verdict names another response";
}

TEST(AnswerVerdict, AHandlerOfTheCallersOwnLeavesTheStageToReadForItself) {
  FakeServer server;
  auto stage = std::make_shared<CountingStage>();
  auto loop = clef::detail::staged_loop(stage, clef::make_curl_loop());
  clef::HttpRequest request;
  request.url = server.base_url() + "/v1/systemone";
  request.headers = {{"Content-Type", "application/json"}};
  request.body = R"({"model":"clef-flash","state":"ticket 1","questions":{"urgent":)"
                 R"({"type":"noul","instructions":"Is it urgent?"}}})";
  std::atomic<int> answered{0};
  loop->start(request, [&](clef::Result<clef::HttpResponse> response) {
    if (response && response->status == 200) ++answered;
  });
  ASSERT_TRUE(wait_until([&] { return answered.load() == 1; }, "the answer"));
  EXPECT_EQ(stage->received_count.load(), 1);
  EXPECT_EQ(stage->judged_count.load(), 0);
  EXPECT_EQ(stage->verdicts.load(), 0);
}

TEST(AnswerVerdict, EachOpenScopeTakesTheFirstVerdictInnermostFirst) {
  struct Heard {
    int verdicts = 0;
    bool whole = false;
  };
  const auto take = [](void* context, const clef::detail::AnswerVerdict& verdict) {
    auto& heard = *static_cast<Heard*>(context);
    ++heard.verdicts;
    heard.whole = verdict.whole;
  };
  const clef::HttpResponse response;
  const clef::ValidationOptions checks;
  const auto judge = [&](bool whole) {
    clef::detail::judge_answer({response, whole, clef::Backend::ollama, checks});
  };
  judge(true);  // no scope open: nobody hears it, nothing breaks
  Heard outer, inner, later;
  {
    clef::detail::VerdictScope outer_scope(take, &outer);
    {
      clef::detail::VerdictScope inner_scope(take, &inner);
      judge(true);
      judge(false);  // another response's: not these scopes'
    }
    clef::detail::VerdictScope later_scope(take, &later);  // a response handed on afterwards
    judge(false);
  }
  judge(true);
  EXPECT_EQ(inner.verdicts, 1);
  EXPECT_TRUE(inner.whole);
  EXPECT_EQ(outer.verdicts, 1);
  EXPECT_TRUE(outer.whole);
  EXPECT_EQ(later.verdicts, 1);
  EXPECT_FALSE(later.whole);
}

TEST(AnswerVerdict, OnlyAClientsOwnHandlerJudges) {
  clef::detail::JudgingHandler judging{nullptr, [](void*, clef::Result<clef::HttpResponse>&&) {}};
  EXPECT_TRUE(clef::detail::handler_judges(judging));
  EXPECT_FALSE(clef::detail::handler_judges([](clef::Result<clef::HttpResponse>) {}));
  EXPECT_FALSE(clef::detail::handler_judges(nullptr));
}

TEST(AnswerVerdict, ChecksAreAlikeOnlyWhenEveryMemberIs) {
  const clef::ValidationOptions plain;
  EXPECT_TRUE(clef::detail::same_checks(plain, plain));
  auto other = plain;
  other.require_asked_model = false;
  EXPECT_FALSE(clef::detail::same_checks(plain, other));
  other = plain;
  other.sum_tolerance = 0.01;
  EXPECT_FALSE(clef::detail::same_checks(plain, other));
  other = plain;
  other.renormalize_tolerance = 0.1;
  EXPECT_FALSE(clef::detail::same_checks(plain, other));
  other = plain;
  other.verdict.yes_at_least = 0.8;
  EXPECT_FALSE(clef::detail::same_checks(plain, other));
  other = plain;
  other.verdict.no_at_most = 0.2;
  EXPECT_FALSE(clef::detail::same_checks(plain, other));
}

/// A client on the loop behind a cache in `directory` (fresh), checking answers with `checks`.
clef::Client cached_client(const FakeServer& server, const std::string& directory,
                           const clef::ValidationOptions& checks) {
  std::filesystem::remove_all(directory);
  clef::CacheOptions cache;
  cache.directory = directory;
  auto options = options_for(server);
  options.validation = checks;
  options.async_transport =
      clef::make_caching_transport(clef::make_curl_loop(), cache, options.backend).value();
  return clef::Client::create(options).value();
}

TEST(CacheOnTheLoop, KeepsWhatTheClientAcceptsAndNothingElse) {
  // What the server answers, set before each request and read on its threads: made before the
  // server, so they outlive it.
  std::string body;
  std::mutex body_mutex;
  FakeServer server;
  server.set_script([&](const clef::MockRequest&, int) -> std::optional<Scripted> {
    std::lock_guard<std::mutex> lock(body_mutex);
    return Scripted{200, body};
  });
  const auto answering = [&](std::string next) {
    std::lock_guard<std::mutex> lock(body_mutex);
    body = std::move(next);
  };
  const std::string directory = ::testing::TempDir() + "verdict_cache";
  for (const std::string& refused :
       {std::string("<html>Sign in to the hotel Wi-Fi</html>"),
        std::string(R"({"model":"clef-flash","answers":{"urgent":{"type":"noul","noul":1.7}}})"),
        std::string(R"({"model":"clef-flash","answers":{}})"), urgent_answer("another-model")}) {
    answering(refused);
    {
      const auto client = cached_client(server, directory, {});
      EXPECT_FALSE(accepted(client.decide(ticket(1)))) << refused;
      const int sent = server.request_count();
      EXPECT_FALSE(from_cache(client.decide(ticket(1)))) << "answered: " << refused;
      EXPECT_EQ(server.request_count(), sent + 1) << refused;
    }  // the cache closed: what it kept is in its packs
    EXPECT_EQ(clef::cache_stats(directory)->entries, 0u) << "kept: " << refused;
  }
  answering(urgent_answer("clef-flash"));
  {
    const auto client = cached_client(server, directory, {});
    const auto first = client.decide(ticket(1));
    ASSERT_TRUE(accepted(first));
    EXPECT_FALSE(from_cache(first));
    const int sent = server.request_count();
    const auto again = client.decide(ticket(1));
    EXPECT_TRUE(from_cache(again));
    EXPECT_TRUE(accepted(again));
    EXPECT_EQ(server.request_count(), sent);
  }
  EXPECT_EQ(clef::cache_stats(directory)->entries, 1u);
}

TEST(CacheOnTheLoop, AClientThatChecksLessIsNotTakenAtItsWord) {
  // The cache keeps only what its own checks accept (CacheOptions::validation): a client that
  // takes any model's answer accepts one the cache must not keep.
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, urgent_answer("another-model")};
  });
  clef::ValidationOptions any_model;
  any_model.require_asked_model = false;
  const std::string directory = ::testing::TempDir() + "verdict_lax";
  {
    const auto client = cached_client(server, directory, any_model);
    ASSERT_TRUE(accepted(client.decide(ticket(1))));
    const int sent = server.request_count();
    EXPECT_FALSE(from_cache(client.decide(ticket(1))));
    EXPECT_EQ(server.request_count(), sent + 1);
  }
  EXPECT_EQ(clef::cache_stats(directory)->entries, 0u);
}

}  // namespace
