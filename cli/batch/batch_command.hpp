// `clef batch`: route a whole file of states, resumable, nothing lost.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_input.hpp"
#include "batch/metrics_export.hpp"
#include "clef/decision.hpp"
#include "clef/question.hpp"
#include "clef/result.hpp"
#include "common/context.hpp"
#include "flags/connection.hpp"
#include "flags/question_flags.hpp"

namespace clef::cli {

struct BatchFlags {
  std::string input;
  std::string output = "-";
  std::string input_format;  ///< Empty: from the file name.
  std::string id_field = "id";
  std::string state_field = "state";
  std::string image_field;  ///< --image-field: each item's image file(s); empty: none.
  QuestionFlags questions;
  std::size_t concurrency = 4;
  std::size_t per_host = 0;     ///< Several hosts: the most in flight on one (0: -j only).
  double max_ejected = 10;      ///< Several hosts: the most set aside at once, in percent.
  double rate_total = 0;        ///< --rate-total: every shard's requests per second together.
  std::string rate_store;       ///< --rate-store redis://HOST:PORT/KEY: where shards share it.
  bool state_affinity = false;  ///< Several hosts: each state to its own host.
  double rate = 0;
  double throttle_budget_seconds = 600;  ///< How long one item may be throttled (429/503).
  bool ordered = false;
  bool resume = false;
  bool force_resume = false;
  bool overwrite = false;
  bool dedupe = false;
  std::string keep_alive;
  std::string output_format = "jsonl";     ///< jsonl | csv | tsv
  std::vector<std::string> state_columns;  ///< CSV/TSV: the state as an object of these columns.
  std::string policy;      ///< --policy FILE: thresholds below which an answer abstains.
  std::string shard;       ///< --shard K/N or auto: decide only this shard's items.
  std::size_t shards = 0;  ///< --shards N, for --shard auto in a Kubernetes Indexed Job.
  /// --max-cost USD: the run's spend cap (each of N shards: USD/N); with --resume, what the kept
  /// lines cost counts toward it.
  std::optional<double> max_cost;
  bool estimate = false;    ///< --estimate: decide a sample, say what the run would cost, stop.
  std::size_t sample = 20;  ///< --sample K: the estimate's sample.
  MetricsTargets metrics;   ///< --metrics-file, --metrics-push, --metrics-job.
  ConnectionFlags connection;
  /// What the user does next after an interrupt or a stop (a cost cap), and when OUTPUT holds
  /// another run's lines: clef eval, which has no --resume, -o, --overwrite or --force-resume,
  /// says its own. Empty: clef batch's (--resume, when OUTPUT can be read back).
  std::string after_interrupt;
  std::string after_other_run =
      "use another -o, --overwrite to start again, or --force-resume if you mean it";
};

CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags);
/// The flags of how a file is read and sent (formats, fields, questions, concurrency, rate,
/// dedupe, connection), shared with `clef eval`.
void add_batch_run_flags(CLI::App& command, BatchFlags& flags);
int run_batch_command(const BatchFlags& flags, const CLI::App& command, const Context& context);

/// What a run of the batch engine tells besides writing OUTPUT, as it happens: clef eval keeps
/// the results typed instead of reading OUTPUT back. Called on the engine's delivery thread,
/// under its lock, in the order results are written.
class ResultObserver {
 public:
  virtual ~ResultObserver() = default;
  /// A line --resume kept from an earlier run (before anything is sent).
  virtual void kept(const nlohmann::ordered_json& line) = 0;
  /// Item `id`'s result, once its line is written.
  virtual void result(const nlohmann::ordered_json& id, const Result<Decision>& result) = 0;
  /// Item `id` asked what item `first_id` asked (--dedupe): it has first_id's result.
  virtual void duplicate(const nlohmann::ordered_json& id,
                         const nlohmann::ordered_json& first_id) = 0;
};

/// How a run of the engine ended.
struct BatchEnd {
  int exit_code = 0;
  bool completed = false;       ///< Every item got its result (some may be failures).
  bool output_refused = false;  ///< OUTPUT was refused before anything was sent.
};

/// One run of the batch engine over flags.input asking `questions`: writes flags.output
/// (nothing when it is empty), tells `observer` (if any) every result, prints progress and
/// what stopped it, as `clef batch` does.
BatchEnd run_batch_engine(const BatchFlags& flags, const CLI::App& command,
                          const std::vector<Question>& questions, InputFormat format,
                          const Context& context, ResultObserver* observer);

}  // namespace clef::cli
