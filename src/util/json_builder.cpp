// The implementation of json_builder.hpp: an ordered_json built from SAX events without
// quadratic work.
#include "util/json_builder.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace clef::detail {
namespace {

/// Up to this many members, repeated keys are found by comparing each with those before it: no
/// index to sort, and a real object (an answer, a ticket) has a handful of members.
constexpr std::size_t kCompareEachUpTo = 16;

/// Members whose key repeats an earlier one's: the earliest takes the value of the last (as
/// nlohmann's operator[] would have assigned it), and is_repeat marks the others to drop. False
/// when no key repeats.
bool fold_repeats(std::vector<std::pair<std::string, Json>>& members,
                  std::vector<bool>& is_repeat) {
  const std::size_t n = members.size();
  bool any = false;
  if (n <= kCompareEachUpTo) {
    for (std::size_t later = 1; later < n; ++later) {
      for (std::size_t first = 0; first < later; ++first) {
        if (members[first].first != members[later].first) continue;
        if (!any) is_repeat.assign(n, false);
        any = true;
        members[first].second = std::move(members[later].second);
        is_repeat[later] = true;
        break;  // `first` is the earliest: a repeat between them was folded into it already
      }
    }
    return any;
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // Stable: within a run of equal keys the places stay in the order written.
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return members[a].first < members[b].first;
  });
  for (std::size_t i = 0; i < n;) {
    std::size_t end = i + 1;
    while (end < n && members[order[end]].first == members[order[i]].first) ++end;
    if (end - i > 1) {
      if (!any) is_repeat.assign(n, false);
      any = true;
      members[order[i]].second = std::move(members[order[end - 1]].second);
      for (std::size_t k = i + 1; k < end; ++k) is_repeat[order[k]] = true;
    }
    i = end;
  }
  return any;
}

}  // namespace

JsonBuilder::Open& JsonBuilder::open_next(bool object) {
  if (m_depth == m_open.size()) m_open.emplace_back();
  Open& open = m_open[m_depth++];
  open.object = object;
  open.members.clear();
  open.elements.clear();
  return open;
}

bool JsonBuilder::start_object(std::size_t /*elements*/) {
  open_next(true);
  return true;
}

bool JsonBuilder::key(string_t& name) {
  m_open[m_depth - 1].key = std::move(name);
  return true;
}

bool JsonBuilder::end_object() {
  Open& open = m_open[m_depth - 1];
  std::vector<bool> is_repeat;
  const bool repeats = fold_repeats(open.members, is_repeat);
  Json object(Json::value_t::object);
  auto& members = object.get_ref<Json::object_t&>();
  members.reserve(open.members.size());
  for (std::size_t i = 0; i < open.members.size(); ++i) {
    if (repeats && is_repeat[i]) continue;
    members.emplace_back(std::move(open.members[i].first), std::move(open.members[i].second));
  }
  open.members.clear();
  --m_depth;
  return add(std::move(object));
}

bool JsonBuilder::start_array(std::size_t /*elements*/) {
  open_next(false);
  return true;
}

bool JsonBuilder::end_array() {
  Open& open = m_open[m_depth - 1];
  Json array(Json::value_t::array);
  array.get_ref<Json::array_t&>() = std::move(open.elements);
  open.elements.clear();  // moved from: empty, and ready for the next array here
  --m_depth;
  return add(std::move(array));
}

bool JsonBuilder::add(Json&& value) {
  if (m_depth == 0) {
    m_root = std::move(value);
    return true;
  }
  Open& open = m_open[m_depth - 1];
  if (open.object)
    open.members.emplace_back(std::move(open.key), std::move(value));
  else
    open.elements.push_back(std::move(value));
  return true;
}

}  // namespace clef::detail
