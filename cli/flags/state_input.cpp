// The implementation of state_input.hpp: where `clef ask` gets its state.
#include "flags/state_input.hpp"

#include "common/files.hpp"

namespace clef::cli {
namespace {

std::string without_trailing_newline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

}  // namespace

Result<State> read_state(const StateFlags& flags, std::istream& in, bool stdin_is_piped) {
  const int sources =
      (flags.text ? 1 : 0) + (flags.file.empty() ? 0 : 1) + (flags.json.empty() ? 0 : 1);
  if (sources > 1) {
    return make_error(ErrorKind::invalid_input,
                      "give the state one way: STATE, --state-file or --state-json", "state");
  }
  if (flags.text) return State::text(*flags.text);
  if (!flags.json.empty()) {
    std::string text = flags.json;
    if (text.front() == '@') {
      auto file = read_file(text.substr(1), "the state file", in);
      if (!file) return file.error();
      text = std::move(file).value();
    }
    auto state = State::json(text);
    if (!state) {
      Error error = state.error();
      error.where = "--state-json " + error.where;
      return error;
    }
    return state;
  }
  if (!flags.file.empty() || stdin_is_piped) {
    auto text = read_file(flags.file.empty() ? "-" : flags.file, "the state file", in);
    if (!text) return text.error();
    std::string state = without_trailing_newline(std::move(text).value());
    if (state.empty()) {
      return make_error(ErrorKind::invalid_input, "the state is empty",
                        flags.file.empty() || flags.file == "-" ? "stdin" : flags.file);
    }
    return State::text(std::move(state));
  }
  return make_error(ErrorKind::invalid_input,
                    "no state: give STATE, --state-file FILE, --state-json JSON, or pipe it in",
                    "state");
}

}  // namespace clef::cli
