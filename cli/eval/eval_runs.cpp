// The implementation of eval_runs.hpp: clef eval's results per model.
#include "eval/eval_runs.hpp"

#include <cctype>
#include <fstream>
#include <unordered_map>

#include "batch/batch_output.hpp"
#include "batch/batch_results.hpp"
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
  ModelResults out{std::move(model), {}};
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

}  // namespace

Result<EvalResults> collect_results(const EvalFlags& flags, const CLI::App& command,
                                    const std::vector<Question>& asked, InputFormat format,
                                    const LabelledSet& set, const Context& context) {
  if (!flags.from_results.empty()) return read_results_files(flags, asked, set, context);
  EvalResults out;
  const std::vector<std::string> models =
      flags.models.empty() ? std::vector<std::string>{flags.run.connection.model} : flags.models;
  for (const auto& model : models) {
    BatchFlags run = flags.run;
    run.connection.model = model;
    // Without --answers the results are kept only here: nothing is written.
    run.output = flags.answers.empty() ? "" : answers_path(flags.answers, model, models.size() > 1);
    std::ifstream existing(run.output);
    run.resume = !run.output.empty() && existing.good() &&
                 existing.peek() != std::ifstream::traits_type::eof();
    context.err << "clef: eval: " << model << (run.resume ? ": resuming " + run.output : "")
                << "\n";
    ResultCollector collector(asked);
    const BatchEnd end = run_batch_engine(run, command, asked, format, context, &collector);
    if (!end.completed) {
      if (end.output_refused && run.resume) {
        context.err << "clef: eval: " << run.output
                    << " holds the answers of another run (other questions, model, server or "
                       "data): give another --answers, or delete it to start again\n";
      }
      out.stopped = end.exit_code;
      return out;
    }
    out.models.push_back(in_set_order(model, collector.take(), set));
    price_cache_hits(out.models.back(), run.connection, context);
  }
  return out;
}

}  // namespace clef::cli
