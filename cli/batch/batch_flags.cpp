// The implementation of batch_command.hpp's flags: what `clef batch` (and, for the shared ones,
// `clef eval`) accepts, with its help text.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "batch/batch_command.hpp"
#include "batch/batch_shard.hpp"
#include "common/flag_rules.hpp"
#include "flags/hosts.hpp"
#include "flags/price_flag.hpp"

namespace clef::cli {

namespace {

/// --rate: what the clock can honour. Slower than one a day is not a rate but a stop, and a rate
/// of 1e-10 would overflow the wait between two requests. Nothing strtod skips or rounds away:
/// no white space, and no value so small it underflows to 0 ("no cap") with ERANGE, as 1e-400
/// does.
CLI::Validator rate_check(const std::string& flag) {
  return CLI::Validator(
      [flag](const std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double rate = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                                ? -1
                                : std::strtod(text.c_str(), &end);
        if (end == nullptr || end == text.c_str() || *end != '\0' || errno == ERANGE ||
            !std::isfinite(rate) || rate < 0 || (rate != 0 && (rate < 1.0 / 86400 || rate > 1e6)))
          return flag + " must be 0 (no cap) or from 1/86400 (one a day) to 1000000, not " + text;
        return std::string();
      },
      "RATE", "rate");
}

/// How fast a run may send and how much it may spend.
void add_pace_flags(CLI::App& batch, BatchFlags& flags) {
  batch
      .add_option("--rate", flags.rate,
                  "At most this many requests per second (0 = no cap; at least one a day, "
                  "1/86400, at most 1000000)")
      ->check(rate_check("--rate"));
  batch
      .add_option("--rate-total", flags.rate_total,
                  "With --shard: at most this many requests per second for all N shards "
                  "together (each takes R/N, its first start staggered by K/R s)")
      ->check(rate_check("--rate-total"));
  batch
      .add_option("--rate-store", flags.rate_store,
                  "With --rate-total: keep that budget in Redis (redis://HOST:PORT/KEY, one "
                  "key per run) so shards on any machine, started at any moment, share it; "
                  "R/N each while Redis cannot be reached (REDISCLI_AUTH: its password)")
      ->type_name("URL");
  batch
      .add_option("--max-cost", flags.max_cost,
                  "USD: never start a request that could take what the run spends past this "
                  "many dollars (spent + the dearest decision so far for each in flight); with "
                  "--shard K/N each shard spends at most USD/N; --resume counts what the kept "
                  "lines cost; stops with exit 3")
      ->check(CLI::Validator(
          [](const std::string& text) {
            return dollars_from_text(text, 1e9)
                       ? std::string()
                       : "--max-cost must be a number of dollars from 0 to 1000000000, not " + text;
          },
          "USD", "dollars"));
}

/// Several hosts: what each takes, and how many may be set aside.
void add_fleet_flags(CLI::App& batch, BatchFlags& flags) {
  batch
      .add_option("--per-host", flags.per_host,
                  "Several hosts: at most this many requests in flight on one (0 = -j only)")
      ->check(finite_number() & CLI::Range(0, 10000));
  batch
      .add_option("--max-ejected", flags.max_ejected,
                  "Several hosts: at most this percent of them set aside at once for failing "
                  "(at least one; as Envoy's max_ejection_percent); the rest stay in rotation")
      ->type_name("PERCENT")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            const auto value = dollars_from_text(text, 100);
            return value ? std::string() : "not a percent from 0 to 100: " + text;
          },
          "PERCENT", "percent"));
  batch.add_flag("--state-affinity", flags.state_affinity,
                 "Several hosts: send each state to its own host (rendezvous hash), the least "
                 "busy one when that host is full");
}

/// What a monitoring system reads of the run: a textfile for node_exporter, a Pushgateway.
void add_metrics_flags(CLI::App& batch, BatchFlags& flags) {
  batch
      .add_option("--metrics-file", flags.metrics.file,
                  "Write the run's Prometheus metrics to FILE every --metrics-interval and at "
                  "the end, replaced whole each time (node_exporter's textfile collector: *.prom)")
      ->type_name("FILE");
  batch
      .add_option("--metrics-push", flags.metrics.push_url,
                  "PUT the same metrics to this Prometheus Pushgateway (http(s)://HOST:9091) "
                  "every --metrics-interval and at the end, as job --metrics-job (and shard K)")
      ->type_name("URL");
  batch.add_option("--metrics-job", flags.metrics.job, "The job label of --metrics-push")
      ->capture_default_str();
  batch
      .add_option("--metrics-interval", flags.metrics.interval_seconds,
                  "Seconds between two exports of the metrics (0.1 to 86400)")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.1, 86400.0));
}

/// --shard and --shards.
void add_shard_flags(CLI::App& batch, BatchFlags& flags) {
  // An empty value (--shard "$UNSET") would otherwise read as no --shard: every task of the
  // array job would decide the whole input.
  batch
      .add_option("--shard", flags.shard,
                  "K/N: decide only shard K of N (0 to N-1) of INPUT, by a hash of each id; "
                  "auto: K (and N) from a Kubernetes Indexed Job, Slurm array, AWS Batch array "
                  "job or Google Cloud Batch job; then clef merge")
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.empty() ? std::string("is empty (an unset variable?): give K/N or auto")
                                : std::string();
          },
          "K/N"));
  // Checked as text first: "-1" would otherwise wrap to 2^64 - 1 in the size_t.
  batch
      .add_option("--shards", flags.shards,
                  "N, for --shard auto in a Kubernetes Indexed Job (its completions) or an AWS "
                  "Batch array job (its size)")
      ->check(CLI::Validator(
          [](std::string& text) {
            // Digits alone (not 1e3, 0x10, -1): a count, refused naming the range otherwise.
            const bool digits = !text.empty() && text.size() <= 9 &&
                                text.find_first_not_of("0123456789") == std::string::npos;
            const long value = digits ? std::stol(text) : 0;
            if (value < 1 || value > static_cast<long>(max_shards))
              return "the number of shards must be 1 to " + std::to_string(max_shards) + ", not " +
                     text;
            return std::string();
          },
          "N"));
}

}  // namespace

void add_batch_run_flags(CLI::App& batch, BatchFlags& flags) {
  batch.add_option("--input-format", flags.input_format,
                   "jsonl | csv | tsv | text (default: from the name)");
  batch.add_option("--id-field", flags.id_field, "Field or column holding the id")
      ->capture_default_str();
  batch.add_option("--state-field", flags.state_field, "Field or column holding the state")
      ->capture_default_str();
  batch
      .add_option("--state-columns", flags.state_columns,
                  "CSV/TSV: the state is a JSON object of these columns, in this order (a,b,c)")
      ->delimiter(',')
      ->allow_extra_args(false);
  batch.add_option("--image-field", flags.image_field,
                   "Field or column naming each item's image file (or a JSON array of files), "
                   "read from the input's directory when relative");
  add_question_flags(batch, flags.questions);
  batch.add_option("-j,--concurrency", flags.concurrency, "Requests in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  add_pace_flags(batch, flags);
  add_fleet_flags(batch, flags);
  batch
      .add_option("--throttle-budget", flags.throttle_budget_seconds,
                  "Seconds one item may spend throttled (429/503 pauses) before it is written as "
                  "a rate_limited error")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.0, 86400.0));
  batch.add_flag("--dedupe", flags.dedupe, "Send identical states once");
  batch.add_option("--keep-alive", flags.keep_alive,
                   "Ollama: keep the model loaded (seconds or 5m)");
  add_connection_flags(batch, flags.connection);
  add_hosts_flags(batch, flags.connection);
}

CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags) {
  CLI::App* batch =
      app.add_subcommand("batch", "Decide every state in a JSONL, CSV/TSV or text file");
  batch->footer(
      "Examples:\n"
      "  clef batch tickets.jsonl -q questions.json -o routed.jsonl -j 16\n"
      "  clef batch tickets.jsonl -q questions.json -o routed.jsonl --resume\n"
      "  clef batch tickets.csv --state-columns subject,body -q questions.json --output-format "
      "csv\n"
      "  clef batch tickets.jsonl -q questions.json --host http://gpu1:11434 \\\n"
      "    --host http://gpu2:11434 -j 32 -o routed.jsonl\n");
  batch->add_option("INPUT", flags.input, "Input file ('-' = stdin)")->required();
  batch->add_option("-o,--output", flags.output, "Output JSONL file ('-' = stdout)")
      ->capture_default_str();
  add_batch_run_flags(*batch, flags);
  batch->add_flag("--estimate", flags.estimate,
                  "Say what the run would cost and stop: decide a seeded sample of the items "
                  "(--sample), extrapolate by the size of each request; writes no OUTPUT");
  batch->add_option("--sample", flags.sample, "--estimate: how many items to decide")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  batch->add_flag("--ordered", flags.ordered, "Write results in input order");
  batch->add_flag("--resume", flags.resume,
                  "Keep OUTPUT's successful results and decide the rest (same run only)");
  batch->add_flag("--force-resume", flags.force_resume,
                  "With --resume: continue even if OUTPUT was written by a different run");
  batch->add_flag("--overwrite", flags.overwrite, "Replace an existing OUTPUT");
  batch
      ->add_option("--output-format", flags.output_format,
                   "jsonl | csv | tsv (csv/tsv: the input's columns, then per question its "
                   "winner, probability and confidence)")
      ->check(CLI::IsMember({"jsonl", "csv", "tsv"}))
      ->capture_default_str();
  batch
      ->add_option("--policy", flags.policy,
                   "Thresholds from `clef eval --fit-thresholds`: an answer below its "
                   "threshold is written with status \"abstained\"")
      ->type_name("FILE");
  add_shard_flags(*batch, flags);
  add_metrics_flags(*batch, flags);
  return batch;
}

}  // namespace clef::cli
