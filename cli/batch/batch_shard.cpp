// The implementation of batch_shard.hpp: clef batch's --shard.
#include "batch/batch_shard.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "batch/batch_output.hpp"
#include "clef/batch.hpp"

namespace clef::cli {
namespace {

Error shard_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, where);
}

/// A whole number written in digits alone (no sign, no space), held at most at
/// `beyond_any_shard`: any count a user types past the limit is refused by the range check,
/// which says what is allowed, however many digits it has.
constexpr std::size_t beyond_any_shard = std::size_t{1} << 62;
std::optional<std::size_t> whole_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(value * 10 + static_cast<std::size_t>(c - '0'), beyond_any_shard);
  }
  return value;
}

/// A number for a message: the held value says "past 2^62", not the digits given.
std::string number_text(std::size_t value) {
  return value == beyond_any_shard ? "a number over 4611686018427387903" : std::to_string(value);
}

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

Result<std::size_t> number_from(const char* name) {
  const auto text = variable(name);
  const auto value = text ? whole_number(*text) : std::nullopt;
  if (!value) {
    return shard_error(std::string(name) + " is not a whole number: \"" + text.value_or("") + "\"",
                       name);
  }
  return *value;
}

Result<Shard> checked(std::size_t index, std::size_t count, const std::string& where) {
  if (count < 1 || count > max_shards) {
    return shard_error("the number of shards must be 1 to " + std::to_string(max_shards) +
                           ", not " + number_text(count),
                       where);
  }
  if (index >= count) {
    return shard_error("shard " + number_text(index) +
                           " does not exist: shards are numbered 0 to " + std::to_string(count - 1),
                       where);
  }
  return Shard{index, count};
}

/// A Slurm array task's shard. Slurm gives the task's id and the array's lowest id, highest id,
/// step and number of tasks (SLURM_ARRAY_TASK_MIN/MAX/STEP/COUNT, from the ids actually
/// submitted; STEP is 1 for a list like 2,3). A whole array (its COUNT is every id from MIN to
/// MAX by STEP) is split COUNT ways, the task being the (ID − MIN) / STEP th. A rerun of some
/// shards cannot know how many there were: with --shards N, an array of fewer than N tasks
/// takes each task's id as its shard's number (`sbatch --array=2,3` reruns shards 2 and 3).
Result<Shard> shard_from_slurm(std::size_t shards_flag) {
  auto id = number_from("SLURM_ARRAY_TASK_ID");
  if (!id) return id.error();
  auto count = number_from("SLURM_ARRAY_TASK_COUNT");
  if (!count) return count.error();
  // Slurm sets _MIN for every array task; without it every task would count from its own id
  // and all be shard 0.
  auto lowest = number_from("SLURM_ARRAY_TASK_MIN");
  if (!lowest) return lowest.error();
  std::size_t low = lowest.value(), step = 1;
  std::optional<std::size_t> high;
  if (variable("SLURM_ARRAY_TASK_STEP")) {
    auto number = number_from("SLURM_ARRAY_TASK_STEP");
    if (!number) return number.error();
    step = number.value();
  }
  if (variable("SLURM_ARRAY_TASK_MAX")) {
    auto number = number_from("SLURM_ARRAY_TASK_MAX");
    if (!number) return number.error();
    high = number.value();
  }
  // Without _MAX (a hand-made environment), the array is taken as whole.
  if (!high && count.value() > 0) high = low + (count.value() - 1) * step;
  if (step == 0) return shard_error("SLURM_ARRAY_TASK_STEP is 0", "SLURM_ARRAY_TASK_STEP");
  if (!high || low > *high || id.value() < low || id.value() > *high) {
    return shard_error("SLURM_ARRAY_TASK_ID " + std::to_string(id.value()) +
                           " is not within the array's SLURM_ARRAY_TASK_MIN and _MAX",
                       "SLURM_ARRAY_TASK_ID");
  }
  const std::size_t whole = (*high - low) / step + 1;
  const bool is_whole = count.value() == whole && (id.value() - low) % step == 0;
  if (shards_flag != 0 && count.value() > shards_flag) {
    return shard_error("--shards " + std::to_string(shards_flag) + " but the Slurm array has " +
                           std::to_string(count.value()) + " tasks",
                       "--shards");
  }
  // A rerun (fewer tasks than shards, or a list such as 1,2,3,7): each task's id is its shard.
  if (shards_flag != 0 && (count.value() < shards_flag || !is_whole))
    return checked(id.value(), shards_flag, "SLURM_ARRAY_TASK_ID");
  if (!is_whole) {
    return shard_error(
        "this Slurm array is not one whole range (" + std::to_string(count.value()) +
            " tasks from " + std::to_string(low) + " to " + std::to_string(*high) +
            (step > 1 ? " by " + std::to_string(step) : std::string()) +
            "): a rerun of some shards needs --shards N, with which each task's id is its "
            "shard's number (sbatch --array=2,3 reruns shards 2 and 3)",
        "SLURM_ARRAY_TASK_ID");
  }
  return checked((id.value() - low) / step, count.value(), "SLURM_ARRAY_TASK_ID");
}

/// A scheduler that gives each task its index but not the number of tasks (Kubernetes Indexed
/// Jobs, AWS Batch array jobs): --shards N says it.
Result<Shard> shard_from_index(const char* index_variable, const std::string& scheduler,
                               const std::string& count_name, std::size_t shards_flag) {
  if (shards_flag == 0) {
    return shard_error("the " + scheduler + " gives the index (" + index_variable +
                           "), not the number of shards: add --shards N (" + count_name + ")",
                       "--shards");
  }
  auto index = number_from(index_variable);
  if (!index) return index.error();
  return checked(index.value(), shards_flag, index_variable);
}

/// A Google Cloud Batch task: BATCH_TASK_INDEX of BATCH_TASK_COUNT.
Result<Shard> shard_from_google_batch(std::size_t shards_flag) {
  auto index = number_from("BATCH_TASK_INDEX");
  if (!index) return index.error();
  auto count = number_from("BATCH_TASK_COUNT");
  if (!count) return count.error();
  if (shards_flag != 0 && shards_flag != count.value()) {
    return shard_error("the Google Cloud Batch task group has " + std::to_string(count.value()) +
                           " tasks (BATCH_TASK_COUNT), not --shards " + std::to_string(shards_flag),
                       "--shards");
  }
  return checked(index.value(), count.value(), "BATCH_TASK_INDEX");
}

/// The schedulers --shard auto reads, each by the variable that says a task runs under it.
struct Scheduler {
  const char* variable;
  const char* name;
};
constexpr Scheduler schedulers[] = {{"JOB_COMPLETION_INDEX", "Kubernetes Indexed Job"},
                                    {"SLURM_ARRAY_TASK_ID", "Slurm array"},
                                    {"AWS_BATCH_JOB_ARRAY_INDEX", "AWS Batch array job"},
                                    {"BATCH_TASK_INDEX", "Google Cloud Batch job"},
                                    {"NOMAD_ALLOC_INDEX", "Nomad job"}};

/// --shard auto: the array job's index and size, from the one scheduler whose variables are set.
Result<Shard> shard_from_environment(std::size_t shards_flag) {
  std::vector<const Scheduler*> found;
  for (const Scheduler& scheduler : schedulers)
    if (variable(scheduler.variable)) found.push_back(&scheduler);
  if (found.size() > 1) {
    return shard_error(std::string("--shard auto found two schedulers' indexes (") +
                           found[0]->variable + ", " + found[1]->variable +
                           "): which one numbers this task is not clear; give --shard K/N",
                       "--shard");
  }
  if (found.empty()) {
    return shard_error(
        "--shard auto reads JOB_COMPLETION_INDEX (Kubernetes Indexed Job, with --shards N), "
        "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (Slurm array), AWS_BATCH_JOB_ARRAY_INDEX "
        "(AWS Batch array job, with --shards N) or BATCH_TASK_INDEX and BATCH_TASK_COUNT (Google "
        "Cloud Batch), and none is set: give --shard K/N",
        "--shard");
  }
  const std::string variable_name = found.front()->variable;
  if (variable_name == "JOB_COMPLETION_INDEX")
    return shard_from_index("JOB_COMPLETION_INDEX", "Kubernetes Indexed Job",
                            "the Job's completions", shards_flag);
  if (variable_name == "SLURM_ARRAY_TASK_ID") return shard_from_slurm(shards_flag);
  if (variable_name == "AWS_BATCH_JOB_ARRAY_INDEX")
    return shard_from_index("AWS_BATCH_JOB_ARRAY_INDEX", "AWS Batch array job",
                            "the job's arrayProperties.size", shards_flag);
  if (variable_name == "BATCH_TASK_INDEX") return shard_from_google_batch(shards_flag);
  // Nomad reuses an index after a reschedule (a lost node's allocation is replaced, and for a
  // while both may run) and a count changed by `nomad job scale` renumbers nothing: two tasks
  // could write one shard while another shard is never written.
  return shard_error(
      "Nomad's NOMAD_ALLOC_INDEX is not a shard number clef can trust: after a reschedule two "
      "allocations can have the same index. Dispatch one parameterized job per shard and give "
      "--shard K/N from its meta (e.g. --shard \"$NOMAD_META_shard\"); clef merge then checks "
      "every item is there once",
      "--shard");
}

}  // namespace

std::string Shard::text() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

Result<Shard> parse_shard(const std::string& text, const std::string& where) {
  const auto slash = text.find('/');
  const auto index =
      slash == std::string::npos ? std::nullopt : whole_number(text.substr(0, slash));
  const auto count =
      slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
  if (!index || !count) {
    return shard_error(
        "\"" + text.substr(0, 40) +
            "\" is not K/N (shard K of N, counted from 0: 0/4, 1/4, 2/4, 3/4) or auto",
        where);
  }
  return checked(*index, *count, where);
}

Result<std::optional<Shard>> resolve_shard(const std::string& flag, std::size_t shards_flag) {
  if (flag.empty()) {  // not given (an empty value is refused as the flag is read)
    if (shards_flag != 0) {
      return shard_error("--shards N goes with --shard auto (the index from the array job)",
                         "--shards");
    }
    return std::optional<Shard>();
  }
  auto shard = flag == "auto" ? shard_from_environment(shards_flag) : parse_shard(flag, "--shard");
  if (!shard) return shard.error();
  if (flag != "auto" && shards_flag != 0 && shards_flag != shard->count) {
    return shard_error(
        "--shard " + flag + " and --shards " + std::to_string(shards_flag) + " disagree",
        "--shards");
  }
  return std::optional<Shard>(shard.value());
}

bool in_shard(const Shard& shard, const nlohmann::ordered_json& id) {
  if (id.is_null()) return shard.index == 0;
  return shard_of(id_key(id), shard.count) == shard.index;
}

}  // namespace clef::cli
