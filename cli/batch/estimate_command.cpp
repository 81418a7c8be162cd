// The implementation of estimate_command.hpp: the input read as `clef batch` reads it, sampled,
// decided and extrapolated by the library (clef::estimate_cost), then said.
#include "batch/estimate_command.hpp"

#include "batch/batch_job.hpp"
#include "batch/batch_shard.hpp"
#include "batch/cost_tally.hpp"
#include "clef/estimate.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/input_file.hpp"
#include "flags/hosts.hpp"
#include "flags/request_builder.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

/// The run's items as the batch would send them: its shard's share, each state in the
/// prototype's request with its images.
RequestSource items_of(InputReader& reader, const BatchFlags& flags,
                       const std::optional<Shard>& shard, const DecisionRequest& prototype) {
  return [&reader, &flags, shard, &prototype]() -> std::optional<Result<DecisionRequest>> {
    for (;;) {
      std::optional<InputItem> item = reader.next();
      if (!item) return std::nullopt;
      if (shard && !in_shard(*shard, item->id)) continue;
      return request_of(std::move(*item), prototype, flags);
    }
  };
}

/// The estimate for machines (stdout) and for people (stderr).
void say(const Context& context, const CostEstimate& estimate) {
  nlohmann::ordered_json out = {
      {"items", estimate.items},       {"sampled", estimate.sampled},
      {"priced", estimate.priced},     {"unknown", estimate.unknown},
      {"failed", estimate.failed},     {"sample_usd", estimate.sample_usd},
      {"estimate_usd", *estimate.usd}, {"low_usd", estimate.low_usd},
      {"high_usd", estimate.high_usd}};
  context.out << dump_json(out) << '\n';
  context.err << "clef: estimate: " << dollars_in_message(*estimate.usd) << " for "
              << estimate.items << " items (95 % interval " << dollars_in_message(estimate.low_usd)
              << " to " << dollars_in_message(estimate.high_usd) << "), from " << estimate.priced
              << " sampled decisions that cost " << dollars_in_message(estimate.sample_usd)
              << "; nothing else was sent\n";
  if (estimate.failed > 0)
    context.err << "clef: " << estimate.failed << " sampled items failed and were left out ("
                << estimate.first_failure->message << ")\n";
  if (estimate.unknown > 0)
    context.err << "clef: " << estimate.unknown
                << " sampled decisions had no known cost and were left out\n";
  if (estimate.bad > 0)
    context.err << "clef: " << estimate.bad
                << " items cannot be sent (the run writes them as errors, at no cost)\n";
  if (estimate.repeats > 0)
    context.err << "clef: --dedupe: " << estimate.repeats
                << " items repeat an earlier one and are not counted\n";
}

}  // namespace

int run_estimate(const BatchFlags& flags, const std::vector<Question>& questions,
                 InputFormat format, const Context& context) {
  auto refuse = [&](const Error& error) { return report(context, error, flags.connection); };
  auto shard = resolve_shard(flags.shard, flags.shards);
  if (!shard) return refuse(shard.error());
  auto input = InputFile::open(flags.input, "the input", context.in, context.stop);
  if (!input) return refuse(input.error());
  auto prototype = build_request(State::text(""), questions, {}, flags.keep_alive);
  if (!prototype) return refuse(prototype.error());
  auto clients = make_clients(flags.connection, context);
  if (!clients) return refuse(clients.error());
  auto reader =
      make_reader(input->stream(), format,
                  {flags.id_field, flags.state_field, flags.state_columns, {}, flags.image_field});
  if (!reader) return refuse(reader.error());
  EstimateOptions options;
  options.sample = flags.sample;
  options.dedupe = flags.dedupe;
  options.batch.concurrency = flags.concurrency;
  options.batch.max_cost_usd = flags.max_cost;  // the sample is paid for too
  options.batch.should_stop = [&] { return context.stop && context.stop->load(); };
  const CostEstimate estimate =
      estimate_cost(clients->front(),
                    items_of(*reader.value(), flags, shard.value(), prototype.value()), options);
  if (context.stop && context.stop->load()) {
    print_error(context, "interrupted; nothing was estimated");
    return as_int(ExitCode::interrupted);
  }
  if (auto failure = input->failure()) return refuse(*failure);
  // No signal came: the sample was stopped by the cost cap, which it is paid under too.
  if (!estimate.usd && flags.max_cost && estimate.first_failure &&
      estimate.first_failure->kind == ErrorKind::cancelled) {
    print_error(context,
                "the cost cap of " + dollars_in_message(*flags.max_cost) +
                    " stopped the sample before any cost was known: there is no estimate",
                "the sample is paid for too: raise --max-cost");
    return as_int(ExitCode::authentication);
  }
  if (!estimate.usd && estimate.failed == estimate.sampled && estimate.first_failure)
    return refuse(*estimate.first_failure);
  if (!estimate.usd) {
    const std::string& model = flags.connection.model;
    print_error(
        context,
        "no cost to estimate from: the server measured none and clef has no price for " + model,
        "give --price " + model + "=INPUT[,OUTPUT] (dollars per million tokens)");
    return as_int(ExitCode::usage);
  }
  say(context, estimate);
  return as_int(ExitCode::ok);
}

}  // namespace clef::cli
