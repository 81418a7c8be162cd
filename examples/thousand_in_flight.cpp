// Keeps 1,000 decisions in flight from one thread and prints each result as it completes.
// No thread per request: the transfers, their retries and timeouts run on the client's event
// loop, and this thread only starts work and prints what comes back.
//
//   thousand_in_flight [COUNT]   # asks the Ollama at OLLAMA_HOST (default 127.0.0.1:11434)
//
// Against the mock, which holds 1,000 connections open for a second each:
//
//   clef mock --latency 1000 --max-connections 1000 &
//   OLLAMA_HOST=http://127.0.0.1:PORT thousand_in_flight 5000
#include <clef/clef.hpp>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>

namespace {

constexpr std::size_t in_flight_limit = 1000;

clef::DecisionRequest ticket(std::size_t n) {
  clef::DecisionRequest request;
  request.state = clef::State::json(R"({"ticket": "I was charged twice for order )" +
                                    std::to_string(n) + R"(. Please refund the extra payment."})")
                      .value();
  request.questions.push_back(clef::Question::choice("team",
                                                     "Which team should handle this ticket?",
                                                     {{"billing", "Payments and refunds"},
                                                      {"technical", "Bugs and integrations"},
                                                      {"other", "None of the above"}}));
  return request;
}

/// What the callbacks hand back to the main thread. They run on the loop thread, where they
/// must not block: they only queue the result and wake main.
struct Completed {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::pair<std::size_t, clef::Result<clef::Decision>>> results;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 5000;
  auto options = clef::ClientOptions::from_environment(clef::Backend::ollama);
  options.request_timeout = std::chrono::seconds(60);
  auto client = clef::Client::create(options);
  if (!client) {
    std::cerr << "thousand_in_flight: " << client.error().to_string() << "\n";
    return 2;
  }

  Completed completed;
  std::size_t started = 0, finished = 0, failed = 0;
  while (finished < count) {
    // Start work until 1,000 are in flight: submit() returns at once.
    for (; started < count && started - finished < in_flight_limit; ++started) {
      client->submit(ticket(started), [&completed, n = started](clef::Result<clef::Decision> r) {
        std::lock_guard<std::mutex> lock(completed.mutex);
        completed.results.emplace_back(n, std::move(r));
        completed.arrived.notify_one();
      });
    }
    std::deque<std::pair<std::size_t, clef::Result<clef::Decision>>> batch;
    {
      std::unique_lock<std::mutex> lock(completed.mutex);
      completed.arrived.wait(lock, [&] { return !completed.results.empty(); });
      batch.swap(completed.results);
    }
    for (auto& [n, decision] : batch) {
      ++finished;
      if (!decision) {
        ++failed;
        std::cout << "ticket " << n << ": error: " << decision.error().to_string() << "\n";
      } else if (const clef::ChoiceAnswer* team = decision->answers.front().choice()) {
        std::cout << "ticket " << n << ": " << team->choice << " (p=" << team->probability << ")\n";
      }
    }
  }
  std::cerr << "thousand_in_flight: " << finished << " decisions, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
