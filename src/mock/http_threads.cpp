// The mock's connection threads: started per connection up to the limit, gone when idle.
#include "mock/http_threads.hpp"

#include <pthread.h>

#include <chrono>
#include <thread>

namespace clef::mock_detail {

void ConnectionThreads::enqueue(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  m_state->jobs.push_back(std::move(job));
  if (m_state->jobs.size() > m_state->idle && m_state->threads < m_max_threads.load()) {
    ++m_state->threads;
    // Detached, owning the shared state: shutdown() waits for every thread to leave it.
    std::thread([state = m_state] {
      // Named, so a process that hosts the mock can tell its threads from its own.
      pthread_setname_np(pthread_self(), "clef-mock-conn");
      work(*state);
    }).detach();
  }
  m_state->ready.notify_one();
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(m_state->mutex);
  m_state->stopping = true;
  m_state->ready.notify_all();
  m_state->gone.wait(lock, [&] { return m_state->threads == 0; });
}

void ConnectionThreads::work(State& state) {
  std::unique_lock<std::mutex> lock(state.mutex);
  for (;;) {
    ++state.idle;
    const bool woken = state.ready.wait_for(lock, std::chrono::seconds(10),
                                            [&] { return state.stopping || !state.jobs.empty(); });
    --state.idle;
    if (state.jobs.empty() && (state.stopping || !woken)) break;
    if (state.jobs.empty()) continue;
    auto job = std::move(state.jobs.front());
    state.jobs.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
  --state.threads;
  state.gone.notify_all();
}

}  // namespace clef::mock_detail
