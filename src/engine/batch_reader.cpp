// The batch engine's reader (batch_run.hpp): the thread of the run's own that pulls items from a
// source that may wait (a pipe, a FIFO), so that its next line never holds back results or a
// stop, and the bound it reads within.
#include "engine/batch_run.hpp"

namespace clef::detail {

/// Items from the source while there is room for them (those read, prepared, in flight and
/// waiting to be sent again stay within -j plus the read-ahead; ordered, within the window),
/// each handed to the caller as soon as it is read: a live stream's item must not wait for the
/// one after it. Ends at the source's end, at a stop, or when the run is over.
void BatchRun::read_source() {
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    m_reader_waiting = true;
    m_room.wait(lock, [&] { return m_reader_quit || m_stopping || may_read(); });
    m_reader_waiting = false;
    if (m_reader_quit || m_stopping) return;
    m_reading = true;
    lock.unlock();
    std::optional<Result<DecisionRequest>> item;
    std::exception_ptr threw;
    try {
      item = m_source();
    } catch (...) {
      threw = std::current_exception();  // rethrown on the caller's thread
    }
    lock.lock();
    m_reading = false;
    m_source_threw = threw;
    if (item) {
      m_read.push_back(std::move(*item));
      ++m_read_count;
    } else {
      m_source_ended = true;
    }
    if (m_caller_waiting && caller_needed()) wake_caller();
    if (!item) return;
  }
}

/// Under the lock: whether the reader may take another item now.
bool BatchRun::may_read() const {
  return !m_source_ended && held() < m_limit + m_ahead && !window_full();
}

/// Under the lock: the reader, asleep for want of room, woken once half the read-ahead is free
/// (not for every item that lands), or to end.
void BatchRun::wake_reader() {
  if (!m_reader_waiting) return;
  if (m_reader_quit || m_stopping || (may_read() && held() + m_ahead / 2 < m_limit + m_ahead))
    m_room.notify_one();
}

/// Items read and not yet delivered: read (and those the caller is preparing), prepared, in
/// flight, waiting to be sent again, or back and waiting for the sink (or in it). Results that
/// wait count too: else a sink slower than the loop (a FIFO, a busy caller) would let the reader
/// run ahead by as many items as wait, past the bound --jobs sets (and clef's
/// clef_decisions_pending states).
std::size_t BatchRun::held() const {
  return m_read.size() + m_with_caller + m_prepared.size() + m_in_flight + m_waiting.size() +
         m_finished.size() + m_delivering;
}

/// Ordered: the reader may not run further ahead of the next item to deliver than the window.
bool BatchRun::window_full() const {
  return m_options.ordered && !m_source_ended && m_read_count >= m_next_to_deliver + m_window;
}

/// The run is over: the reader stops. A source still waiting for input (the run ended early)
/// is asked to return through BatchOptions::interrupt_source, and waited for: the source is the
/// caller's, and must not be called once run_batch has returned. What it read meanwhile was never
/// sent and is delivered as not done.
void BatchRun::finish_reading() {
  bool reading = false;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_reader_quit = true;
    reading = m_reading;
    m_room.notify_one();
  }
  if (reading && m_options.interrupt_source) m_options.interrupt_source();
  if (m_reader.joinable()) m_reader.join();
  std::deque<Result<DecisionRequest>> left;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    left.swap(m_read);
  }
  for (std::size_t i = 0; i < left.size(); ++i)
    m_delivery.deliver(m_summary.started++,
                       make_error(ErrorKind::cancelled, "the batch was stopped"));
}

}  // namespace clef::detail
