// The implementation of batch_shard.hpp: clef batch's --shard.
#include "batch/batch_shard.hpp"

#include <cstdlib>

#include "batch/batch_output.hpp"
#include "clef/batch.hpp"

namespace clef::cli {
namespace {

Error shard_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, where);
}

/// A whole number of at most seven digits, nothing else (no sign, no space).
std::optional<std::size_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 7) return std::nullopt;
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
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
    return shard_error("the number of shards must be 1 to " + std::to_string(max_shards), where);
  }
  if (index >= count) {
    return shard_error("shard " + std::to_string(index) +
                           " does not exist: shards are numbered 0 to " + std::to_string(count - 1),
                       where);
  }
  return Shard{index, count};
}

/// --shard auto: the array job's index and size.
Result<Shard> shard_from_environment(std::size_t shards_flag) {
  if (variable("JOB_COMPLETION_INDEX")) {
    if (shards_flag == 0) {
      return shard_error(
          "a Kubernetes Indexed Job gives the index (JOB_COMPLETION_INDEX), not the number of "
          "shards: add --shards N (the Job's completions)",
          "--shards");
    }
    auto index = number_from("JOB_COMPLETION_INDEX");
    if (!index) return index.error();
    return checked(index.value(), shards_flag, "JOB_COMPLETION_INDEX");
  }
  if (variable("SLURM_ARRAY_TASK_ID")) {
    auto id = number_from("SLURM_ARRAY_TASK_ID");
    if (!id) return id.error();
    auto count = number_from("SLURM_ARRAY_TASK_COUNT");
    if (!count) return count.error();
    std::size_t minimum = 0;
    if (variable("SLURM_ARRAY_TASK_MIN")) {
      auto min = number_from("SLURM_ARRAY_TASK_MIN");
      if (!min) return min.error();
      minimum = min.value();
    }
    if (shards_flag != 0 && shards_flag != count.value()) {
      return shard_error("--shards " + std::to_string(shards_flag) + " but the Slurm array has " +
                             std::to_string(count.value()) + " tasks",
                         "--shards");
    }
    if (id.value() < minimum)
      return shard_error("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN",
                         "SLURM_ARRAY_TASK_ID");
    return checked(id.value() - minimum, count.value(), "SLURM_ARRAY_TASK_ID");
  }
  return shard_error(
      "--shard auto reads JOB_COMPLETION_INDEX (Kubernetes Indexed Job, with --shards N) or "
      "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (Slurm array), and neither is set: give "
      "--shard K/N",
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
  if (flag.empty()) {
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
