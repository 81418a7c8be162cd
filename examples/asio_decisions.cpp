// Decisions on an application's own event loop: standalone Asio drives clef's curl loop
// (clef::make_driven_curl_loop), so every callback runs on this program's one thread and clef
// starts no thread at all. One request is cancelled through a CancelToken on the way.
//
//     asio_decisions [COUNT]        (the server: OLLAMA_HOST, e.g. clef mock's URL)
//
// Prints each ticket's team, then a summary with the threads this process ran.
#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <asio.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "clef/clef.hpp"

namespace {

/// Runs a DrivenCurlLoop from an asio::io_context: run_once() whenever clef's descriptor turns
/// readable or its timeout passes.
class ClefOnAsio {
 public:
  ClefOnAsio(asio::io_context& io, std::shared_ptr<clef::DrivenCurlLoop> loop)
      // Asio owns and closes what it is given: a duplicate, so clef's own descriptor stays open.
      : m_loop(std::move(loop)), m_descriptor(io, ::dup(m_loop->descriptor())), m_timer(io) {
    turn();
  }

  void stop() {
    m_stopped = true;
    m_descriptor.cancel();
    m_timer.cancel();
  }

 private:
  void turn() {
    // Asio watches descriptors edge-triggered: go on while clef's is still readable, so no
    // readiness is left behind that no new edge would announce.
    for (int turns = 0; turns < 64; ++turns) {
      m_loop->run_once();
      pollfd ready{m_loop->descriptor(), POLLIN, 0};
      if (m_stopped || ::poll(&ready, 1, 0) != 1) break;
    }
    if (m_stopped) return;
    if (!m_waiting) {
      m_waiting = true;
      m_descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                              [this](asio::error_code error) {
                                m_waiting = false;
                                if (!error && !m_stopped) turn();
                              });
    }
    m_timer.expires_after(m_loop->timeout());  // cancels the previous wait: one timer at a time
    m_timer.async_wait([this](asio::error_code error) {
      if (!error && !m_stopped) turn();
    });
  }

  std::shared_ptr<clef::DrivenCurlLoop> m_loop;
  asio::posix::stream_descriptor m_descriptor;
  asio::steady_timer m_timer;
  bool m_waiting = false;
  bool m_stopped = false;
};

int threads_in_this_process() {
  int n = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(tasks)) n += entry->d_name[0] != '.';
    ::closedir(tasks);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 100;
  if (count < 2) {
    std::cerr << "usage: asio_decisions [COUNT of at least 2]\n";
    return 2;
  }
  asio::io_context io;
  auto loop = clef::make_driven_curl_loop();
  ClefOnAsio driver(io, loop);

  clef::ClientOptions options = clef::ClientOptions::from_environment(clef::Backend::ollama);
  options.async_transport = loop;  // every decision of this client runs on the Asio thread
  auto client = clef::Client::create(options);
  if (!client) {
    std::cerr << client.error().to_string() << "\n";
    return 1;
  }

  const auto main_thread = std::this_thread::get_id();
  int answered = 0, failed = 0, cancelled = 0, elsewhere = 0, done = 0, most_threads = 0;
  clef::CancelSource cancel_last;
  for (int i = 0; i < count; ++i) {
    clef::DecisionRequest request;
    request.state = clef::State::text("ticket " + std::to_string(i) + ": I was charged twice.");
    request.questions.push_back(clef::Question::choice(
        "team", "Which team should handle this ticket?",
        {{"billing", "Payments and refunds"}, {"technical", "Bugs and integrations"}}));
    auto on_decision = [&, i](clef::Result<clef::Decision> decision) {
      // No lock anywhere: every callback runs here, on the thread that runs io.run().
      if (std::this_thread::get_id() != main_thread) ++elsewhere;
      most_threads = std::max(most_threads, threads_in_this_process());
      if (decision) {
        ++answered;
        std::cout << "ticket " << i << ": " << decision->answers[0].winner() << "\n";
      } else if (decision.error().kind == clef::ErrorKind::cancelled) {
        ++cancelled;
      } else {
        ++failed;
        std::cerr << "ticket " << i << ": " << decision.error().to_string() << "\n";
      }
      if (++done == count) driver.stop();  // the io_context then runs out of work
    };
    if (i == count - 1) {
      client->submit(request, on_decision, cancel_last.token());
      cancel_last.cancel();  // ends it at once, on the loop, through the same callback
    } else {
      client->submit(request, on_decision);
    }
  }
  io.run();
  std::cout << answered << " answered, " << failed << " failed, " << cancelled
            << " cancelled; callbacks off the Asio thread: " << elsewhere
            << "; threads in this process: " << most_threads << "\n";
  return failed == 0 && cancelled == 1 && elsewhere == 0 && most_threads == 1 ? 0 : 1;
}
