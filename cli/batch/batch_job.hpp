// Internal to `clef batch`: the source, the sink and the stop rule of one run (batch_command.cpp
// runs the engine over them) — items read and filtered (shard, --resume's done ids), results
// written as lines or rows, --dedupe's repeats copied, and how the run ended.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "batch/batch_command.hpp"
#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_progress.hpp"
#include "batch/batch_shard.hpp"
#include "batch/batch_table.hpp"
#include "batch/cost_tally.hpp"
#include "batch/seen_ids.hpp"
#include "clef/batch.hpp"
#include "clef/policy.hpp"
#include "common/context.hpp"

namespace clef::cli {

/// Item `item`'s request as the batch sends it: `prototype` with its state and, with
/// --image-field, its images, read now (an error names the line and the field).
Result<DecisionRequest> request_of(InputItem&& item, const DecisionRequest& prototype,
                                   const BatchFlags& flags);

/// The engine calls next() on its reader thread while deliver(), duplicate() and paused() run on
/// the calling thread: what they share (the items in flight, the progress line) is under m_mutex.
class BatchJob {
 public:
  BatchJob(const BatchFlags& flags, const Context& context, InputReader& reader, OutputFile* output,
           Progress& progress, const std::unordered_set<std::string>& done,
           const DecisionRequest& prototype, const ResultTable* table, const Policy* policy,
           ResultObserver* observer, std::optional<Shard> shard)
      : m_flags(flags),
        m_context(context),
        m_reader(reader),
        m_output(output),
        m_progress(progress),
        m_done(done),
        m_prototype(prototype),
        m_table(table),
        m_policy(policy),
        m_observer(observer),
        m_shard(shard) {}

  /// The next item of this run's share (its shard, not done by an earlier run); nullopt at the
  /// end of the input.
  std::optional<Result<DecisionRequest>> next();

  /// Item `index`'s result: written, unless it was not done (cancelled, the quota spent).
  void deliver(std::size_t index, Result<Decision>&& result);

  /// Item `index` asked what item `first` asked: copy first's line under this item's id.
  void duplicate(std::size_t index, std::size_t first);

  /// Writes the lines of the results delivered since the last call, in one write (the engine
  /// calls it after each group of results: BatchOptions::after_delivery). A line counts as
  /// written, on the progress line and in the metrics, once this wrote it.
  void write_group();

  /// The batch pauses for a 429/503 until `until`.
  void paused(std::chrono::system_clock::time_point until, const Error& why);
  /// A 429/503 from `host`.
  void refused(const std::string& host);
  /// A line for stderr from another thread (the metrics export's): written between the
  /// progress line's updates, never inside one.
  void warn(const std::string& line);

  /// A write failed, the quota is spent, or the user interrupted. Asked by the engine on its
  /// caller's thread; the first interrupt seen is said on stderr at once (the wait for the requests
  /// in flight can be as long as the server takes).
  bool should_stop();

  /// What the run's end prints, and its exit code; `input_read_whole`: the input was read to
  /// its end, not cut off by a failure or a stop.
  BatchEnd finish(const BatchSummary& summary, bool input_read_whole);

  /// --max-cost: the run's cap (each of N shards takes cap/N) and what the kept lines cost; a
  /// refusal (exit 2, nothing sent) when a kept line's cost is unknown and the cap could not hold.
  std::optional<BatchEnd> cap_cost(std::optional<double> cap, const KeptCost& kept);
  /// This run's share of --max-cost, or nullopt.
  std::optional<double> cost_cap() const { return m_cost_cap; }
  BatchOptions::SpentBefore spent_before() const { return m_spent_before; }

 private:
  struct Pending {
    nlohmann::ordered_json id;
    std::size_t line = 0;
    std::vector<std::string> fields;  ///< --output-format csv|tsv: the input's own cells.
  };

  /// How a stopped run goes on: --resume where OUTPUT can be read back; clef eval's own words.
  std::string how_to_go_on(const std::string& to) const;
  std::optional<BatchEnd> cost_stop(const BatchSummary& summary) const;
  /// The JSONL line of one item: its id with the decision, or with the error.
  static std::string json_line(const Pending& pending, const Result<Decision>& result);

  /// The cells a table row repeats: the CSV/TSV row as read, else the id.
  std::vector<std::string> table_fields(const InputItem& item) const;

  Pending take(std::size_t index);

  /// A line waiting for write_group(), with what its result means for the progress line and
  /// the observer once it is written.
  struct Unwritten {
    std::size_t index = 0;
    nlohmann::ordered_json id;
    std::string line;  ///< Without its newline.
    bool ok = false;
    std::optional<Result<Decision>> result;  ///< deliver()'s; none for a duplicate.
    nlohmann::ordered_json duplicate_of;     ///< duplicate()'s.
  };
  /// Adds the item's line to the group write_group() writes (nothing once a write failed: not
  /// done).
  void add_to_group(Unwritten&& item);
  /// write_group() under m_mutex.
  void write_group_locked();
  /// Where the group's lines start in OUTPUT, or nullopt when the write failed: to a file in
  /// one write, cut back whole on failure; to a stream (stdout, a pipe, a FIFO), which cannot
  /// be cut back, a line per write, so that what failed is exactly the lines not written
  /// (`written` counts those that were).
  std::optional<std::uint64_t> write_lines(const std::vector<Unwritten>& items,
                                           std::size_t& written);
  /// A written line's progress, observer and --dedupe bookkeeping.
  void count_written(const Unwritten& item, std::uint64_t offset);
  /// Where item `index`'s line went, for --dedupe's copies.
  void remember_written(const Unwritten& item, std::uint64_t offset);

  int report_write_failure() const;
  /// Warnings about ids at the end of a run: input lines that repeat one, and (a --resume that
  /// read its input whole) lines kept from the last run whose ids the input no longer has.
  void warn_of_ids(bool input_read_whole) const;

  const BatchFlags& m_flags;
  const Context& m_context;
  InputReader& m_reader;
  OutputFile* m_output;  ///< None: results only go to the observer.
  Progress& m_progress;
  const std::unordered_set<std::string>& m_done;
  const DecisionRequest& m_prototype;
  const ResultTable* m_table;
  const Policy* m_policy;
  ResultObserver* m_observer;
  std::optional<Shard> m_shard;

  std::mutex m_mutex;  ///< Over m_pending and m_progress: next() runs on the reader's thread.
  std::unordered_map<std::size_t, Pending> m_pending;  ///< Only the items in flight.
  std::size_t m_next_index = 0;
  SeenIds m_seen_ids;  ///< The ids read, for the warning.
  /// The ids of m_done this run has read (and skipped): one read again is a repeat, not sent.
  std::unordered_set<std::string> m_done_read;
  std::size_t m_duplicate_ids = 0;
  std::string m_first_duplicate;
  std::vector<std::uint64_t> m_offsets;  ///< --dedupe to a file: where each item's line is.
  /// --dedupe to stdout, where a line cannot be read back: what each item's line said.
  struct WrittenLine {
    nlohmann::ordered_json id;
    bool ok = false;
    bool written = false;
  };
  std::vector<WrittenLine> m_firsts;
  std::vector<Unwritten> m_group;  ///< The lines write_group() writes.
  std::size_t m_not_recorded = 0;  ///< --replay: items the cassette has no recording of.
  bool m_write_failed = false;
  bool m_input_ended = false;  ///< next() found no more items.
  bool m_interrupt_said = false;
  int m_write_errno = 0;
  std::optional<Error> m_quota;
  std::optional<double> m_cost_cap;          ///< This run's share of --max-cost.
  BatchOptions::SpentBefore m_spent_before;  ///< What the lines --resume kept cost.
};

}  // namespace clef::cli
