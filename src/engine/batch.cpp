// The implementation of clef/batch.hpp, its engine (batch_run.hpp): the caller's thread feeding
// prepared items and delivering results, the loop thread settling and starting. What a result
// means is batch_settle.cpp; what may start and when, batch_start.cpp; delivery in order and
// --dedupe's repeats, batch_delivery.cpp; the reader's thread, batch_reader.cpp; decide_all.cpp
// the calls over it.
#include "clef/batch.hpp"

#include <poll.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "clef/async_transport.hpp"
#include "curl/curl_loop.hpp"
#include "engine/batch_run.hpp"
#include "engine/client_impl.hpp"
#include "util/sha256_bytes.hpp"

namespace clef {
namespace detail {
namespace {

/// How long the caller's thread sleeps at most while items are in flight: should_stop is asked
/// at least this often, and a pause this long at a time.
constexpr std::chrono::milliseconds kCallerLooks{20};

}  // namespace

BatchRun::BatchRun(const std::vector<Client>& hosts, const RequestSource& source,
                   const ResultSink& sink, const BatchOptions& options)
    : m_first(hosts.front()),
      m_source(source),
      m_sink(sink),
      m_options(options),
      m_dedupe(options.dedupe && options.on_duplicate),
      m_several(hosts.size() > 1),
      m_limit(std::max<std::size_t>(options.concurrency, 1)),
      m_window(m_limit * 8),
      m_ahead(m_limit),
      m_batch(std::max<std::size_t>(m_limit / 2, 1)),
      m_source_on_caller(options.source_never_waits),
      m_retry(engine_retry(m_first.options().retry, m_several)),
      m_hosts(hosts, m_limit, options.per_host, options.max_ejected_share),
      m_spent(options.already_spent.usd),
      m_dearest(options.already_spent.decisions > 0
                    ? std::optional<double>(options.already_spent.dearest_usd)
                    : std::nullopt),
      m_costs_known(options.already_spent.decisions) {
  refuse_waiting_for_itself(hosts, options);
}

BatchSummary BatchRun::run() {
  // A shard of a shared rate waits its place before its first start (--rate-total).
  if (m_options.max_requests_per_second > 0 && m_options.first_start_offset.count() > 0) {
    m_next_slot = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::min(m_options.first_start_offset,
                                              std::chrono::nanoseconds(std::chrono::hours(24))));
  }
  // BatchOptions::cancel wakes the caller's thread at once, however long it would wait.
  const std::uint64_t registration = m_options.cancel.on_cancel([this] {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cancel_heard = true;
    wake_caller();
  });
  try {
    if (!m_source_on_caller) m_reader = std::thread([this] { read_source(); });
    BatchSummary summary = drive();
    m_options.cancel.forget(registration);
    wait_for_loops_to_return();
    return summary;
  } catch (...) {
    m_options.cancel.forget(registration);
    abandon();
    throw;
  }
}

// ---- The caller's thread -------------------------------------------------------------------

BatchSummary BatchRun::drive() {
  std::vector<Result<DecisionRequest>> read;
  for (;;) {
    const bool stop_asked = asked_to_stop();
    if (m_source_on_caller && !stop_asked) read_on_caller(read);
    Outbox out;
    auto prepared = prepare(read);
    m_delivery.after_delivery();  // what prepare() delivered (bad items, repeats) before a wait
    const bool done = exchange(std::move(prepared), stop_asked, out);
    if (out.source_threw) std::rethrow_exception(out.source_threw);
    send_all(out.sends);
    deliver(out);
    // Now, not after the next prepare(): should_stop, asked first, may read what the sink's
    // write of this group did (clef batch stops on a failed write).
    m_delivery.after_delivery();
    read = std::move(out.read);
    if (done) break;
  }
  finish_reading();
  m_delivery.after_delivery();
  std::lock_guard<std::mutex> lock(m_mutex);
  m_summary.throttled = m_tally.throttled;
  m_summary.stopped = m_tally.stopped;
  m_summary.quota_exhausted = m_tally.quota_exhausted;
  m_summary.unreachable = m_tally.unreachable;
  m_summary.spent_usd = m_spent - m_options.already_spent.usd;
  m_summary.cost_cap_reached = m_tally.cost_cap_reached;
  m_summary.cost_unknown = m_tally.cost_unknown;
  m_summary.hosts = m_hosts.summaries();
  m_summary.most_ejected_at_once = m_hosts.most_ejected_at_once();
  return m_summary;
}

/// BatchOptions::should_stop, asked on this thread only (it may read what the sink wrote).
bool BatchRun::asked_to_stop() {
  return m_options.should_stop && m_options.should_stop();
}

/// BatchOptions::source_never_waits: the items there is room for, read on this thread (their
/// count, the source's end or its exception reach the run at the next exchange).
void BatchRun::read_on_caller(std::vector<Result<DecisionRequest>>& read) {
  CallerReads& reads = m_caller_reads;
  for (; reads.room > 0 && !reads.ended && !reads.threw; --reads.room) {
    try {
      std::optional<Result<DecisionRequest>> item = m_source();
      if (!item) {
        reads.ended = true;
        return;
      }
      read.push_back(std::move(*item));
      ++reads.count;
    } catch (...) {
      reads.threw = std::current_exception();  // rethrown as the reader's would be
    }
  }
}

/// Under the lock: what the caller's thread read since it last came (source_never_waits), as
/// the reader's thread would have told it item by item.
void BatchRun::take_caller_reads() {
  CallerReads& reads = m_caller_reads;
  m_read_count += reads.count;
  reads.count = 0;
  reads.room = 0;
  if (reads.ended) m_source_ended = true;
  if (reads.threw && !m_source_threw) m_source_threw = reads.threw;
}

/// Under the lock: how many items the caller's thread may read (source_never_waits) within the
/// bound the reader keeps to (may_read). The results it is delivering are not counted: they are
/// delivered before it reads.
std::size_t BatchRun::room_to_read() const {
  if (m_source_ended || m_stopping || m_source_threw) return 0;
  const std::size_t held_then = held() - m_delivering;
  std::size_t room = held_then < m_limit + m_ahead ? m_limit + m_ahead - held_then : 0;
  if (m_options.ordered) {
    const std::size_t window_end = m_next_to_deliver + m_window;
    room = std::min(room, window_end > m_read_count ? window_end - m_read_count : 0);
  }
  return room;
}

/// The items the reader handed over, numbered in the order read and made ready to send: a bad
/// item is delivered at once, and with dedupe a repeat is answered by its first.
std::vector<std::unique_ptr<Flight>> BatchRun::prepare(std::vector<Result<DecisionRequest>>& read) {
  std::vector<std::unique_ptr<Flight>> prepared;
  prepared.reserve(read.size());
  for (Result<DecisionRequest>& item : read) {
    if (auto flight = flight_for(m_summary.started++, std::move(item)))
      prepared.push_back(std::move(flight));
  }
  read.clear();
  return prepared;
}

/// Item `index` ready to send, or null when there is nothing to send (the item was bad, or a
/// duplicate was answered without sending).
std::unique_ptr<Flight> BatchRun::flight_for(std::size_t index, Result<DecisionRequest>&& item) {
  if (!item) {
    m_delivery.deliver(index, item.error());
    return nullptr;
  }
  auto flight = std::make_unique<Flight>();
  flight->index = index;
  flight->request = std::make_shared<const DecisionRequest>(std::move(item.value()));
  if (m_dedupe) {
    auto body = m_first.request_body(*flight->request);
    if (!body) {
      m_delivery.deliver(index, body.error());
      return nullptr;
    }
    flight->key = sha256(body.value());
    if (m_delivery.is_repeat(index, *flight->key)) return nullptr;
  }
  return flight;
}

/// Under the lock: hands the prepared items over, starts what may start, takes out what is done
/// and what was read, and sleeps when there is nothing for this thread to do. True once the run
/// is over (but for a source still being read after a stop: finish_reading).
bool BatchRun::exchange(std::vector<std::unique_ptr<Flight>>&& prepared, bool stop_asked,
                        Outbox& out) {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (auto& flight : prepared) m_prepared.push_back(std::move(flight));
  m_with_caller = 0;  // what this thread took last time is prepared (or delivered) now
  m_delivering = 0;
  if (m_source_on_caller) take_caller_reads();
  if (m_source_threw) {
    // Nothing more starts; the exception goes to run_batch's caller once those in flight land.
    out.source_threw = m_source_threw;
    stop(true);
    return true;
  }
  m_next_to_deliver = m_delivery.next_to_deliver();
  m_exhausted = m_source_ended && m_read.empty();
  if (stop_asked) stop(true);
  // The loop may have decided to stop while this thread prepared: what it prepared ends too.
  if (check_stop()) cancel_waiting();
  const Clock::time_point wake = start_what_may_start(out.sends);
  wake_reader();
  const bool over = m_in_flight == 0 && m_waiting.empty() && m_prepared.empty() && m_read.empty() &&
                    (m_exhausted || m_stopping);
  // Reading on this thread: back for more once half the read-ahead is free (as the reader is
  // woken), or at once when the loop has nothing prepared to start.
  const std::size_t room = m_source_on_caller ? room_to_read() : 0;
  const bool read_more = room > 0 && (room >= m_ahead / 2 || m_prepared.empty());
  const bool busy = !out.sends.empty() || !m_finished.empty() || !m_pauses.empty() ||
                    !m_read.empty() || m_source_threw || over || read_more;
  if (!busy) {
    // Nothing to do here until items are read, a batch of results, a start that is due, or a
    // cancel; and while items are in flight, a look at should_stop now and then.
    m_caller_wakes = std::min(wake, Clock::now() + kCallerLooks);
    m_caller_waiting = true;
    wait_here(lock, m_caller_wakes, [&] { return caller_needed(); });
    m_caller_waiting = false;
    m_cancel_heard = false;  // heard: check_stop() sees the token itself from now on
    m_next_wake = Clock::time_point::max();
  }
  out.finished.swap(m_finished);
  out.pauses.swap(m_pauses);
  out.refusals.swap(m_refusals);
  out.read.assign(std::make_move_iterator(m_read.begin()), std::make_move_iterator(m_read.end()));
  m_read.clear();
  m_with_caller = out.read.size();
  m_delivering = out.finished.size();
  if (m_source_on_caller) m_caller_reads.room = room_to_read();
  return over && out.finished.empty() && out.pauses.empty() && out.refusals.empty() &&
         out.read.empty();
}

/// Under the lock: until `ready()` or `until`, asleep until another thread wakes this one — or,
/// with BatchOptions::drive_loop, turning that loop here, so that its handlers (landed() among
/// them) run on this thread between looks at `ready()`.
template <class Ready>
void BatchRun::wait_here(std::unique_lock<std::mutex>& lock, Clock::time_point until, Ready ready) {
  DrivenCurlLoop* loop = m_options.drive_loop.get();
  if (!loop) {
    if (until == Clock::time_point::max())
      m_arrived.wait(lock, ready);
    else
      m_arrived.wait_until(lock, until, ready);
    return;
  }
  while (!ready()) {
    const Clock::time_point now = Clock::now();
    if (now >= until) return;
    lock.unlock();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
    pollfd work{loop->descriptor(), POLLIN, 0};
    ::poll(&work, 1, static_cast<int>(std::min(loop->timeout(), left).count()));
    loop->run_once();
    lock.lock();
  }
}

/// On the caller's thread: results to the sink (in order when asked), pauses to on_pause.
void BatchRun::deliver(Outbox& out) {
  for (Pause& pause : out.pauses) m_options.on_pause(pause.until, pause.why);
  for (const std::string& host : out.refusals) m_options.on_refusal(host);
  for (Finished& done : out.finished)
    m_delivery.finish(done.index, done.key, std::move(done.result));
}

/// The last results were delivered from inside loop handlers whose stacks still hold the client
/// and its stages for a moment (a cache writes its last entries when its stage goes): run_batch
/// returns once each host's loop has come back from them, so that the caller's Client is the last
/// to let go and a process that exits next loses nothing (a batch's last cache pack was lost so,
/// on a busy machine). A loop this thread turns ran them here: back already. Bounded: a loop
/// shut down meanwhile runs no task.
void BatchRun::wait_for_loops_to_return() const {
  if (m_options.drive_loop) return;
  struct Returned {
    std::mutex mutex;
    std::condition_variable all;
    std::size_t left = 0;
  };
  auto returned = std::make_shared<Returned>();
  std::vector<const AsyncTransport*> asked;
  for (std::size_t i = 0; i < m_hosts.size(); ++i) {
    const auto& loop = m_hosts[i].client.m_impl->async_transport();
    if (!loop || std::find(asked.begin(), asked.end(), loop.get()) != asked.end()) continue;
    asked.push_back(loop.get());
    {
      std::lock_guard<std::mutex> lock(returned->mutex);
      ++returned->left;
    }
    loop->after(std::chrono::milliseconds(0), [returned](bool) {
      std::lock_guard<std::mutex> lock(returned->mutex);
      --returned->left;
      returned->all.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(returned->mutex);
  returned->all.wait_for(lock, std::chrono::seconds(2), [&] { return returned->left == 0; });
}

/// The source, the sink or a callback of the options threw: transfers still in flight will
/// call back into this object, so it must outlive every one of them before the exception goes
/// on to the caller.
void BatchRun::abandon() {
  {
    std::unique_lock<std::mutex> lock(m_mutex);
    stop(true);
    m_caller_waiting = true;
    wait_here(lock, Clock::time_point::max(), [&] { return m_in_flight == 0; });
  }
  finish_reading();
}

// ---- Either thread, under the lock ---------------------------------------------------------

/// The caller's thread, asleep in wait_here(), woken from another thread (the reader's, a
/// cancel's): the loop it may be turning is woken by a task that does nothing.
void BatchRun::wake_caller() {
  m_arrived.notify_one();
  if (m_options.drive_loop) m_options.drive_loop->after(std::chrono::milliseconds(0), [](bool) {});
}

/// A transfer's callback, on the loop's thread: the result settled, the next items started at
/// once from those prepared, and the caller's thread woken only when it has a batch to do.
void BatchRun::landed(Flight* flight, Result<Decision>&& result) {
  std::vector<std::unique_ptr<Flight>> sends;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    settle(Landed{std::unique_ptr<Flight>(flight), std::move(result)});
    check_stop();
    m_next_wake = std::min(m_next_wake, start_what_may_start(sends));
    wake_reader();
    // Notified under the lock: once m_in_flight is 0 the caller may return and destroy this.
    if (m_caller_waiting && caller_needed()) m_arrived.notify_one();
  }
  // Counted in m_in_flight already, so this object outlives them.
  send_all(sends);
}

/// Whether the caller's thread, asleep, has work: items read, a batch of results (any, when
/// nothing else is in flight or ordered delivery waits for them), pauses to announce, the end of
/// the run, a start due before it would wake, or a cancel.
bool BatchRun::caller_needed() const {
  if (m_cancel_heard || !m_pauses.empty() || m_finished.size() >= m_batch) return true;
  if (!m_read.empty() || m_source_threw) return true;
  if (!m_finished.empty() && (m_in_flight == 0 || window_full())) return true;
  if (m_in_flight == 0 && m_waiting.empty() && m_prepared.empty() && (m_source_ended || m_stopping))
    return true;
  return m_next_wake < m_caller_wakes;
}

void BatchRun::send_all(std::vector<std::unique_ptr<Flight>>& sends) {
  for (std::unique_ptr<Flight>& owned : sends) {
    Flight* flight = owned.release();
    // The request is shared, not moved: a 429 sends it again.
    m_hosts[flight->host].client.start_submission(
        flight->request, m_retry,
        [this, flight](Result<Decision> result) { landed(flight, std::move(result)); }, nullptr,
        m_options.cancel);
  }
}

/// The stops the loop's thread may see itself (should_stop is the caller's: asked_to_stop);
/// true once the batch is stopping.
bool BatchRun::check_stop() {
  if (!m_stopping && (m_tally.quota_exhausted || m_tally.unreachable || m_tally.cost_unknown ||
                      m_options.cancel.cancelled()))
    stop(!m_tally.quota_exhausted && !m_tally.unreachable && !m_tally.cost_unknown);
  return m_stopping;
}

/// No new item starts; items prepared or waiting end as cancelled (in flight ones come back).
void BatchRun::stop(bool by_request) {
  if (!m_stopping) {
    m_stopping = true;
    m_tally.stopped = by_request && !m_tally.quota_exhausted && !m_tally.unreachable;
    wake_reader();  // to end: it reads no more
  }
  cancel_waiting();
}

/// Items prepared or waiting out a pause when the batch stops end as the old workers' did.
void BatchRun::cancel_waiting() {
  while (std::unique_ptr<Flight> flight = m_waiting.take_any())
    finish(*flight, make_error(ErrorKind::cancelled, "the batch was stopped"));
  for (std::unique_ptr<Flight>& flight : m_prepared)
    finish(*flight, make_error(ErrorKind::cancelled, "the batch was stopped"));
  m_prepared.clear();
}

void BatchRun::finish(const Flight& flight, Result<Decision>&& result) {
  m_finished.push_back(Finished{flight.index, flight.key, std::move(result)});
}

void BatchRun::refuse_waiting_for_itself(const std::vector<Client>& hosts,
                                         const BatchOptions& options) {
  const bool in_a_handler = RunningLoop::current() != nullptr;
  for (const Client& host : hosts) {
    if (!host.waits_for_itself()) continue;
    if (options.drive_loop && !in_a_handler) continue;  // its owner turning it: the way to wait
    throw std::logic_error(
        in_a_handler ? "run_batch was called from one of its clients' own callbacks, where it "
                       "would wait for itself for ever: submit() the items there"
                     : "run_batch was called on the thread that turns its clients' loop, where it "
                       "would wait for ever: give that loop as BatchOptions::drive_loop");
  }
}

}  // namespace detail

BatchSummary run_batch(const Client& client, const RequestSource& source, const ResultSink& sink,
                       const BatchOptions& options) {
  return detail::BatchRun({client}, source, sink, options).run();
}

BatchSummary run_batch(const std::vector<Client>& hosts, const RequestSource& source,
                       const ResultSink& sink, const BatchOptions& options) {
  if (hosts.empty()) throw std::invalid_argument("run_batch: no host");
  return detail::BatchRun(hosts, source, sink, options).run();
}

}  // namespace clef
