// What a batch's decisions cost, for its summary: the total, the mean and the 95th percentile a
// decision, how much of it the servers measured and how much clef computed, and how many
// decisions' cost is unknown. Flat memory however long the run: the percentile comes from a
// histogram of 100 buckets a decade (within about 2.3 % of the exact value).
#pragma once

#include <array>
#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "clef/batch.hpp"
#include "clef/cost.hpp"
#include "clef/options.hpp"

namespace clef::cli {

/// What the lines --resume keeps cost, for --max-cost: each line's "cost", or for a line whose
/// cost is unknown its usage x the price that applies now (--price); else it is counted unknown.
/// "$0.5", "$0.00999589": dollars in a message, to six significant digits.
std::string dollars_in_message(double amount);

struct KeptCost {
  BatchOptions::SpentBefore spent;
  std::size_t unknown = 0;

  void add(const nlohmann::ordered_json& line, const ClientOptions& client);
};

class CostTally {
 public:
  void add(const Cost& cost);

  /// "clef:   cost: …" lines, or nothing when every decision was free and known (a local
  /// Ollama) or there was none. `model` names what an unknown cost needs a price for.
  void print(std::ostream& err, const std::string& model) const;

  double total_usd() const { return m_total; }
  std::size_t unknown() const { return m_unknown; }

 private:
  /// The smallest amount kept apart from 0 in the histogram: a billionth of a cent.
  static constexpr double kFloor = 1e-11;
  static constexpr int kPerDecade = 100;
  static constexpr int kDecades = 16;  // 1e-11 … 1e5 dollars for one decision
  double percentile(double fraction) const;

  std::size_t m_known = 0;
  std::size_t m_unknown = 0;
  std::array<std::size_t, 5> m_by_source{};  ///< Indexed by CostSource.
  std::array<double, 5> m_usd_by_source{};
  double m_total = 0;
  double m_least = 0, m_most = 0;  ///< Of the known costs: the percentile stays between them.
  std::size_t m_zero = 0;          ///< Known and under kFloor.
  std::array<std::size_t, kPerDecade * kDecades> m_buckets{};
};

}  // namespace clef::cli
