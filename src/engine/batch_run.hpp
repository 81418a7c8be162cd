// Internal: the batch engine (clef/batch.hpp's run_batch) split across its three threads.
// (With BatchOptions::drive_loop the loop's work is done on the caller's thread, and with
// source_never_waits the reader's too: the same parts, turned by one thread.) A
// reader thread of the run's own pulls items from the source, so a source that waits (a pipe, a
// FIFO) never holds back results or stops (a source that never waits is read on the caller's
// thread, as many items at a time as there is room for); the caller's thread turns what was read
// into prepared items and delivers results to the sink; the loop thread, in each transfer's
// callback, settles what came back (batch_settle.cpp) and starts the next prepared item at once.
// They meet under one lock, and each is woken for a batch of work (results to deliver, room for
// items), not for every decision: handing each decision from one thread to the other cost more
// than the decision itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "clef/batch.hpp"
#include "engine/batch_delivery.hpp"
#include "engine/batch_flight.hpp"
#include "engine/host_pool.hpp"

namespace clef::detail {

class BatchRun {
 public:
  using Clock = std::chrono::steady_clock;

  BatchRun(const std::vector<Client>& hosts, const RequestSource& source, const ResultSink& sink,
           const BatchOptions& options);

  BatchSummary run();

 private:
  /// Throws std::logic_error when waiting here for `hosts` would wait for ever: inside one of
  /// their loop's handlers, or on the thread that turns their loop without `options.drive_loop`.
  /// Checked by the constructor, before anything starts.
  static void refuse_waiting_for_itself(const std::vector<Client>& hosts,
                                        const BatchOptions& options);

  /// A flight back from the loop with its result.
  struct Landed {
    std::unique_ptr<Flight> flight;
    Result<Decision> result;
  };
  /// A flight done, for the caller's thread to deliver.
  struct Finished {
    std::size_t index = 0;
    std::optional<Sha256> key;
    Result<Decision> result;
  };
  /// An on_pause call, for the caller's thread to make.
  struct Pause {
    std::chrono::system_clock::time_point until;
    Error why;
  };
  /// What the caller takes out from under the lock in one go.
  struct Outbox {
    std::vector<std::unique_ptr<Flight>> sends;
    std::vector<Finished> finished;
    std::vector<Pause> pauses;
    std::vector<std::string> refusals;          ///< The host of each 429/503, for on_refusal.
    std::vector<Result<DecisionRequest>> read;  ///< From the source, in its order.
    std::exception_ptr source_threw;
  };

  /// The source on the caller's own thread (BatchOptions::source_never_waits): what it may read
  /// and what it read since it last took the lock.
  struct CallerReads {
    std::size_t room = 0;  ///< Items it may read before it takes the lock again.
    std::size_t count = 0;
    bool ended = false;
    std::exception_ptr threw;
  };

  // The reader's thread (batch.cpp).
  void read_source();
  bool may_read() const;
  void wake_reader();
  void finish_reading();

  // The caller's thread (batch.cpp).
  BatchSummary drive();
  bool asked_to_stop();
  void read_on_caller(std::vector<Result<DecisionRequest>>& read);
  void take_caller_reads();
  std::size_t room_to_read() const;
  std::vector<std::unique_ptr<Flight>> prepare(std::vector<Result<DecisionRequest>>& read);
  std::unique_ptr<Flight> flight_for(std::size_t index, Result<DecisionRequest>&& item);
  bool exchange(std::vector<std::unique_ptr<Flight>>&& prepared, bool stop_asked, Outbox& out);
  template <class Ready>
  void wait_here(std::unique_lock<std::mutex>& lock, Clock::time_point until, Ready ready);
  void deliver(Outbox& out);
  void abandon();
  void wait_for_loops_to_return() const;

  // Either thread, under m_mutex (batch.cpp).
  void wake_caller();
  void landed(Flight* flight, Result<Decision>&& result);
  void send_all(std::vector<std::unique_ptr<Flight>>& sends);
  Clock::time_point start_what_may_start(std::vector<std::unique_ptr<Flight>>& sends);
  std::unique_ptr<Flight> next_to_send(Clock::time_point now);
  bool check_stop();
  bool may_spend_more();
  void count_cost(const Result<Decision>& result);
  void stop(bool by_request);
  void cancel_waiting();
  bool caller_needed() const;
  bool window_full() const;
  std::size_t held() const;
  Clock::duration rate_interval() const;
  std::optional<std::string_view> affinity(const Flight& flight) const;

  // What a result means for its item and its host, under m_mutex (batch_settle.cpp).
  void settle(Landed&& landed);
  void count_refusal(HostPool::Host& host);
  void throttled(Landed& landed);
  static bool another_host_may_answer(const Error& error);
  bool moves_free_or_within_retries(Flight& flight, ErrorKind kind) const;
  static bool usable(const Decision& decision);
  Error out_of_throttle_budget(Error error) const;
  void announce_pause(Clock::time_point now, const Error& error);
  void note_reachability(const Result<Decision>& result);
  void finish(const Flight& flight, Result<Decision>&& result);
  static RetryPolicy engine_retry(RetryPolicy policy, bool several_hosts);

  const Client m_first;  ///< Of the hosts: its policy and request bodies stand for all.
  const RequestSource& m_source;
  const ResultSink& m_sink;
  const BatchOptions& m_options;
  const bool m_dedupe;
  const bool m_several;           ///< More than one host.
  const std::size_t m_limit;      ///< -j: the most in flight, ever.
  const std::size_t m_window;     ///< Ordered: how far past the next to deliver items start.
  const std::size_t m_ahead;      ///< Items read beyond those in flight, for the loop to start.
  const std::size_t m_batch;      ///< Results the caller is woken for at once.
  const bool m_source_on_caller;  ///< BatchOptions::source_never_waits: no reader thread.
  const RetryPolicy m_retry;

  // The caller's thread only.
  BatchSummary m_summary;  ///< Its started, succeeded, failed and deduplicated.
  BatchDelivery m_delivery{m_sink, m_options, m_summary};
  std::thread m_reader;  ///< Runs read_source() from run() until finish_reading().
  CallerReads m_caller_reads;

  // Under m_mutex.
  std::mutex m_mutex;
  std::condition_variable m_arrived;  ///< Wakes the caller's thread.
  std::condition_variable m_room;     ///< Wakes the reader's thread.
  HostPool m_hosts;
  BatchSummary m_tally;  ///< Its throttled, stopped, quota_exhausted and unreachable.
  std::deque<Result<DecisionRequest>> m_read;  ///< Read, for the caller to prepare.
  std::size_t m_with_caller = 0;      ///< Taken from m_read, being prepared on the caller's thread.
  std::size_t m_delivering = 0;       ///< Taken from m_finished, being delivered by the caller.
  std::size_t m_read_count = 0;       ///< Items the source gave, in all.
  std::size_t m_next_to_deliver = 0;  ///< The caller's, for the ordered window.
  bool m_source_ended = false;
  bool m_reading = false;         ///< The reader is inside the source.
  bool m_reader_waiting = false;  ///< The reader waits for room.
  bool m_reader_quit = false;     ///< The run is over: the reader reads no more.
  std::exception_ptr m_source_threw;
  std::deque<std::unique_ptr<Flight>> m_prepared;  ///< Prepared, not yet sent.
  WaitingFlights m_waiting;                        ///< To send again, and one held back.
  std::vector<Finished> m_finished;
  std::vector<Pause> m_pauses;
  std::vector<std::string> m_refusals;  ///< Hosts that refused since the caller last looked.
  std::size_t m_in_flight = 0;  ///< Counted from the start's decision to its callback's end.
  bool m_exhausted = false;     ///< The source ended and every item it gave is prepared.
  bool m_stopping = false;
  bool m_cancel_heard = false;  ///< BatchOptions::cancel was cancelled since the caller looked.
  bool m_caller_waiting = false;
  Clock::time_point m_caller_wakes = Clock::time_point::max();
  Clock::time_point m_next_wake = Clock::time_point::max();  ///< For a time-bound start.
  bool m_reached = false;  ///< stop_when_unreachable: a result has come back whole.
  std::size_t m_unreachable_in_a_row = 0;
  double m_spent = 0;               ///< Known costs, already_spent included.
  std::optional<double> m_dearest;  ///< The dearest decision so far: the estimate of the next.
  std::size_t m_costs_known = 0;    ///< Decisions whose cost was known (not cache hits).
  Clock::time_point m_announced_until{};
  Clock::time_point m_next_slot{};
  std::mt19937_64 m_random{std::random_device{}()};
};

}  // namespace clef::detail
