// The implementation of eval_runs.hpp: clef eval's results per model.
#include "eval/eval_runs.hpp"

#include <cctype>
#include <fstream>
#include <map>
#include <unordered_map>

#include "batch/batch_output.hpp"
#include "batch/batch_results.hpp"
#include "clef/probes.hpp"
#include "common/terminal_text.hpp"
#include "flags/connection.hpp"

namespace clef::cli {
namespace {

/// `answers.jsonl` for one model; `answers.MODEL.jsonl` when several share the flag.
std::string answers_path(const std::string& path, const std::string& model, bool several) {
  if (!several) return path;
  std::string safe;
  for (char c : model)
    safe +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_') ? c : '_';
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + "." + safe;
  return path.substr(0, dot) + "." + safe + path.substr(dot);
}

/// The model a --from-results file answered with: what its lines say, else its path.
std::string results_model(const BatchResults& results, const std::string& path) {
  for (const auto& [key, record] : results) {
    if (record.decision && !record.decision->model.empty()) return record.decision->model;
  }
  return path;
}

/// The results by id key, in the set's order; an item without one stays nullopt.
ModelResults in_set_order(std::string model, BatchResults&& results, const LabelledSet& set) {
  ModelResults out{std::move(model), {}, {}, {}};
  out.items.reserve(set.items.size());
  for (const auto& item : set.items) {
    auto found = results.find(item.id);
    if (found == results.end())
      out.items.emplace_back();
    else
      out.items.emplace_back(std::move(found->second));
  }
  return out;
}

/// A cache hit spent nothing now, which says nothing of the model's price: each is priced again
/// by its tokens at `model`'s price (--price, else clef's table), so that a warm cache does not
/// make a model look free. Left as it is when no client can be made for the connection.
void price_cache_hits(ModelResults& results, const ConnectionFlags& connection,
                      const Context& context) {
  ConnectionFlags flags = connection;
  flags.model = results.model;
  auto options = client_options(flags, context);
  if (!options) return;
  auto client = Client::create(options.value());
  if (!client) return;
  for (std::optional<ItemResult>& item : results.items) {
    if (item && item->decision) item->decision->cost = client->cost_if_sent(*item->decision);
  }
}

/// Keeps what the batch engine delivers, typed, by id key: what --resume kept from the
/// answers file, then each new result as its line is written.
class ResultCollector : public ResultObserver {
 public:
  explicit ResultCollector(const std::vector<Question>& asked) : m_asked(asked) {}

  void kept(const nlohmann::ordered_json& line) override {
    if (auto result = item_result_from_line(line, m_asked))
      m_results[result->first] = std::move(result->second);
  }

  void result(const nlohmann::ordered_json& id, const Result<Decision>& result) override {
    ItemResult item;
    if (result) {
      item.decision = result.value();
      // As a batch line records it, so a re-scored --answers file gives the same figures.
      item.latency_ms = static_cast<double>(result->latency.count()) / 1000.0;
    } else {
      item.error_kind = to_string(result.error().kind);
      item.error = result.error().message;
    }
    m_results[id_key(id)] = std::move(item);
  }

  void duplicate(const nlohmann::ordered_json& id,
                 const nlohmann::ordered_json& first_id) override {
    const auto first = m_results.find(id_key(first_id));
    if (first == m_results.end()) return;
    ItemResult copy = first->second;
    copy.latency_ms = 0;
    copy.sent = false;
    m_results[id_key(id)] = std::move(copy);
  }

  BatchResults take() { return std::move(m_results); }

 private:
  const std::vector<Question>& m_asked;
  BatchResults m_results;
};

Result<EvalResults> read_results_files(const EvalFlags& flags, const std::vector<Question>& asked,
                                       const LabelledSet& set, const Context& context) {
  EvalResults out;
  for (std::size_t i = 0; i < flags.from_results.size(); ++i) {
    auto results = read_batch_results(flags.from_results[i], asked, context.in, context.stop);
    if (!results) return results.error();
    std::string model = flags.models.empty() ? results_model(results.value(), flags.from_results[i])
                                             : flags.models[i];
    out.models.push_back(in_set_order(std::move(model), std::move(results).value(), set));
    price_cache_hits(out.models.back(), flags.run.connection, context);
  }
  return out;
}

/// One pass of a model over the set: the first (the questions as asked), one more order of the
/// options (--permute), or one more repeat (--repeat).
struct Pass {
  enum class Kind { first, permuted, repeated } kind = Kind::first;
  std::string name;        ///< Its --answers file's suffix ("order2", "repeat2"); "" for the first.
  std::string cache_salt;  ///< A repeat's own cache entries.
  std::vector<Question> questions;                      ///< As sent.
  std::vector<std::vector<std::string>> option_orders;  ///< [q] of the labelled set, as sent.
};

/// The passes --permute and --repeat ask for, after the first.
std::vector<Pass> probe_passes(const EvalFlags& flags, const std::vector<Question>& asked,
                               const LabelledSet& set) {
  std::vector<Pass> passes = {Pass{Pass::Kind::first, "", "", asked, {}}};
  // Each question's orders, drawn once for every pass (the labelled questions are among them).
  std::map<std::string, std::vector<std::vector<std::string>>> orders;
  for (const Question& question : asked)
    orders[question.name] = option_orders(question, flags.permute, flags.permute_seed);
  for (std::size_t j = 1; j < flags.permute; ++j) {
    Pass pass{Pass::Kind::permuted, "order" + std::to_string(j + 1), "", {}, {}};
    for (const Question& question : asked) {
      const auto& own = orders[question.name];
      pass.questions.push_back(j < own.size() ? with_option_order(question, own[j]) : question);
    }
    for (const Question& labelled : set.questions) {
      const auto& own = orders[labelled.name];
      pass.option_orders.push_back(j < own.size() ? own[j] : std::vector<std::string>());
    }
    passes.push_back(std::move(pass));
  }
  for (std::size_t r = 1; r < flags.repeat; ++r) {
    const std::string name = "repeat" + std::to_string(r + 1);
    passes.push_back(Pass{Pass::Kind::repeated, name, name, asked, {}});
  }
  return passes;
}

/// Runs `pass` through the batch engine (resuming its --answers file when it has lines): its
/// results in the set's order, or nullopt when the run stopped (it has said why; `stopped` gets
/// its exit code).
std::optional<std::vector<std::optional<ItemResult>>> run_pass(
    BatchFlags run, const CLI::App& command, const Pass& pass, InputFormat format,
    const LabelledSet& set, const Context& context, int& stopped) {
  std::ifstream existing(run.output);
  run.resume = !run.output.empty() && existing.good() &&
               existing.peek() != std::ifstream::traits_type::eof();
  context.err << "clef: eval: " << terminal_safe_line(run.connection.model)
              << (pass.name.empty() ? "" : " (" + pass.name + ")")
              << (run.resume ? ": resuming " + run.output : "") << "\n";
  ResultCollector collector(pass.questions);
  const BatchEnd end = run_batch_engine(run, command, pass.questions, format, context, &collector);
  if (!end.completed) {
    if (end.output_refused && run.resume) {
      context.err << "clef: eval: " << run.output
                  << " holds the answers of another run (other questions, model, server or "
                     "data): give another --answers, or delete it to start again\n";
    }
    stopped = end.exit_code;
    return std::nullopt;
  }
  return in_set_order(run.connection.model, collector.take(), set).items;
}

}  // namespace

Result<EvalResults> collect_results(const EvalFlags& flags, const CLI::App& command,
                                    const std::vector<Question>& asked, InputFormat format,
                                    const LabelledSet& set, const Context& context) {
  if (!flags.from_results.empty()) return read_results_files(flags, asked, set, context);
  EvalResults out;
  const std::vector<std::string> models =
      flags.models.empty() ? std::vector<std::string>{flags.run.connection.model} : flags.models;
  const std::vector<Pass> passes = probe_passes(flags, asked, set);
  for (const auto& model : models) {
    BatchFlags run = flags.run;
    run.connection.model = model;
    // Without --answers the results are kept only here: nothing is written.
    const std::string answers =
        flags.answers.empty() ? "" : answers_path(flags.answers, model, models.size() > 1);
    run.after_interrupt = flags.answers.empty()
                              ? "nothing was kept (no --answers): run again, with --answers FILE "
                                "to keep what is decided"
                              : "run the same command again: it goes on from the answers kept "
                                "in --answers";
    run.after_other_run = "give another --answers, or delete it to start again";
    ModelResults results{model, {}, {}, {}};
    for (const Pass& pass : passes) {
      run.output =
          answers.empty() || pass.name.empty() ? answers : answers_path(answers, pass.name, true);
      run.connection.cache_salt = pass.cache_salt;
      int stopped = 0;
      auto items = run_pass(run, command, pass, format, set, context, stopped);
      if (!items) {
        out.stopped = stopped;
        return out;
      }
      if (pass.kind == Pass::Kind::first) {
        results.items = std::move(*items);
      } else {
        (pass.kind == Pass::Kind::permuted ? results.permuted : results.repeated)
            .push_back(ProbeRun{pass.option_orders, std::move(*items)});
      }
    }
    out.models.push_back(std::move(results));
    price_cache_hits(out.models.back(), run.connection, context);
  }
  return out;
}

}  // namespace clef::cli
