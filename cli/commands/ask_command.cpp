// The implementation of ask_command.hpp: `clef ask`.
#include "commands/ask_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "clef/client.hpp"
#include "clef/decision_json.hpp"
#include "clef/eval.hpp"
#include "clef/json.hpp"
#include "commands/cassette_run.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/flag_rules.hpp"
#include "common/terminal_text.hpp"
#include "flags/policy_flag.hpp"
#include "flags/request_builder.hpp"
#include "output/error_report.hpp"
#include "output/render.hpp"

namespace clef::cli {
namespace {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// Bodies above this go in a here-document: one argument may hold at most 128 KiB on Linux
/// (MAX_ARG_STRLEN), and an image easily passes that.
constexpr std::size_t inline_body_limit = 16u * 1024u;

/// The shell words that read the API token from where clef did: --api-token-file, else the
/// backend's variable.
std::string api_token_words(const Client& client, const ConnectionFlags& flags) {
  const char* variable = token_variable(client.options().backend);
  return !flags.api_token_file.empty() ? "$(cat " + shell_quote(flags.api_token_file) + ")"
                                       : std::string("$") + (variable ? variable : "CLEF_API_KEY");
}

/// The same for AI Gateway's token: --aig-token-file, CF_AIG_TOKEN, else the API token's.
std::string gateway_token_words(const Client& client, const ConnectionFlags& flags) {
  if (!flags.gateway.token_file.empty())
    return "$(cat " + shell_quote(flags.gateway.token_file) + ")";
  if (!client.options().gateway.token.empty()) return std::string("$") + ai_gateway_token_variable;
  return api_token_words(client, flags);
}

/// A shell command that sends the same request. No token is in it: the shell reads each from
/// where clef did; a password given in the URL is asked for by curl (--user NAME).
std::string curl_command(const Client& client, const DecisionRequest& request,
                         const std::string& body, const ConnectionFlags& flags) {
  std::string command = "curl -sS " + shell_quote(client.endpoint(request));
  for (const auto& [name, value] : client.redacted_headers(request)) {
    if (name == "Authorization" && value.rfind("Basic ", 0) == 0) {
      // Credentials from the URL: curl asks for the password itself, so it is never printed.
      const auto credentials = url_credentials(client.options().base_url);
      command += " --user " + shell_quote(credentials ? credentials->user : std::string());
    } else if (name == "Authorization") {
      command += " -H \"Authorization: Bearer " + api_token_words(client, flags) + "\"";
    } else if (name == "cf-aig-authorization") {
      command += " -H \"cf-aig-authorization: Bearer " + gateway_token_words(client, flags) + "\"";
    } else if (name == "Content-Type" || name.rfind("cf-aig-", 0) == 0 ||
               name.rfind("TypeSafe-", 0) == 0) {
      // AI Gateway's headers too: without cf-aig-collect-log-payload the gateway would log the
      // ticket that clef was told to keep out of its logs.
      command += " -H " + shell_quote(name + ": " + value);
    }
  }
  // The same route as clef's: curl reads the proxy variables itself, loopback hosts included.
  HttpRequest probe;
  probe.url = client.endpoint(request);
  probe.proxy = client.options().proxy;
  if (const auto proxy = proxy_route(probe)) {
    command += " --proxy " + shell_quote(url_without_credentials(proxy->url));
  } else {
    for (const char* name :
         {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
      const char* value = std::getenv(name);
      if (value && *value) {
        command += " --noproxy '*'";
        break;
      }
    }
  }
  if (body.size() <= inline_body_limit) return command + " --data-binary " + shell_quote(body);
  // A compact JSON body has no newline, so the delimiter line cannot occur inside it.
  return command + " --data-binary @- <<'CLEF_BODY'\n" + body + "\nCLEF_BODY";
}

struct Gate {
  std::string question;
  std::string label;
};

/// The labels a gate on `question` may name, as Answer::winner() spells them.
std::vector<std::string> winner_labels(const Question& question) {
  std::vector<std::string> labels;
  switch (question.type) {
    case QuestionType::choice:
      for (const auto& option : question.options) labels.push_back(option.label);
      break;
    case QuestionType::yes_no:
      labels = {"yes", "no", "unknown"};
      break;
    case QuestionType::score:
      labels = question.levels;
      break;
    case QuestionType::box:
      break;  // a box has edges, not a label (parse_gates refuses it)
  }
  return labels;
}

/// `wanted` as the winner label it names, read as clef eval reads a gold label
/// (clef::gold_label: a choice's label, yes/no as yes/no/true/false/1/0, a score's level label
/// or index), and "unknown" too for yes/no, which a gate may expect but no item is labelled.
std::optional<std::string> gate_label(const Question& question, const std::string& wanted) {
  if (question.type == QuestionType::yes_no && wanted == "unknown") return wanted;
  auto label = gold_label(question, wanted);
  if (!label || label->empty()) return std::nullopt;
  return std::move(label).value();
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "\"" : ", \"") + item + "\"";
  return out;
}

Result<std::vector<Gate>> parse_gates(const std::vector<std::string>& expects,
                                      const std::vector<Question>& questions) {
  std::vector<Gate> gates;
  for (const auto& expect : expects) {
    const auto equals = expect.find('=');
    if (equals == std::string::npos || equals == 0) {
      return make_error(ErrorKind::invalid_input, "expected NAME=LABEL, got \"" + expect + "\"",
                        "--expect");
    }
    const std::string name = expect.substr(0, equals);
    const std::string wanted = expect.substr(equals + 1);
    const auto question = std::find_if(questions.begin(), questions.end(),
                                       [&](const Question& q) { return q.name == name; });
    if (question == questions.end()) {
      return make_error(ErrorKind::invalid_input, "no question named \"" + name + "\"", "--expect");
    }
    if (question->type == QuestionType::box) {
      return make_error(
          ErrorKind::invalid_input,
          "\"" + name + "\" is a box question: a box has edges, not a label to expect",
          "--expect " + expect);
    }
    auto label = gate_label(*question, wanted);
    if (!label) {
      std::string valid = quoted_list(winner_labels(*question));
      if (question->type == QuestionType::score)
        valid += " (or a level index 0 to " + std::to_string(question->levels.size() - 1) + ")";
      return make_error(ErrorKind::invalid_input,
                        "\"" + wanted + "\" is not an answer of " + name + "; it can be " + valid,
                        "--expect " + expect);
    }
    gates.push_back({name, std::move(label).value()});
  }
  return gates;
}

/// Reasons the gates failed; empty when all hold.
std::vector<std::string> failed_gates(const Decision& decision, const std::vector<Gate>& gates,
                                      std::optional<double> min_confidence) {
  std::vector<std::string> failures;
  for (const auto& gate : gates) {
    const Answer* answer = decision.answer(gate.question);
    const std::string winner = answer ? answer->winner() : "";
    if (winner != gate.label) {
      failures.push_back(gate.question + " is \"" + winner + "\", expected \"" + gate.label + "\"");
    }
  }
  if (min_confidence) {
    for (const auto& answer : decision.answers) {
      if (answer.confidence() < *min_confidence) {
        failures.push_back(answer.question + " confidence " + std::to_string(answer.confidence()) +
                           " is below --min-confidence " + std::to_string(*min_confidence));
      }
    }
  }
  return failures;
}

void print_decision(const AskFlags& flags, const Decision& decision,
                    const std::vector<Question>& questions, const DecisionRequest& request,
                    const Context& context) {
  const std::string format = flags.json ? "json" : flags.format;
  if (format == "json")
    context.out << dump_json(to_json(decision)) << "\n";
  else if (format == "jsonl")
    print_jsonl(context.out, decision);
  else if (format == "tsv")
    print_tsv(context.out, decision);
  else if (format == "values")
    print_values(context.out, decision);
  else
    // A box is drawn in pixels only when it is clear which image it is in.
    print_human(context.out, decision, questions, context.color,
                request.images.size() == 1 ? request.images[0].size() : std::nullopt);
}

}  // namespace

CLI::App* add_ask_command(CLI::App& app, AskFlags& flags) {
  CLI::App* ask = app.add_subcommand("ask", "Ask a decision model about one state");
  ask->footer(
      "Examples:\n"
      "  clef ask --state-json '{\"ticket\": \"I was charged twice.\"}' \\\n"
      "    --choice 'team: Which team? | billing=Payments | technical=Bugs | other=Anything else'\n"
      "  echo 'Please refund me' | clef ask --yes-no 'refund: Asks for a refund?' --format values\n"
      "  clef ask --backend workers-ai -m @cf/cloudflare/clef-flash -q questions.json \\\n"
      "    --state-file ticket.txt --json\n");
  ask->add_option("STATE", flags.state.text,
                  "The state as text (or use --state-file/--state-json, or pipe it)");
  ask->add_option("--state-file", flags.state.file, "Read the state text from FILE ('-' = stdin)");
  ask->add_option("--state-json", flags.state.json,
                  "The state as a JSON object/array, or @FILE (key order is kept)");
  add_question_flags(*ask, flags.questions);
  one_value_each(ask->add_option("--image", flags.attachments.images,
                                 "Attach a PNG, JPEG or WebP image (repeatable)")
                     ->type_name("FILE"));
  one_value_each(ask->add_option("--audio", flags.attachments.audio,
                                 "Attach an audio clip: WAV, MP3, AAC, FLAC, Ogg, M4A or WebM "
                                 "(clef-omni only; repeatable, at most 4)")
                     ->type_name("FILE"));
  one_value_each(
      ask->add_option("--video", flags.attachments.videos,
                      "Attach a video: MP4, QuickTime, WebM or Matroska (clef-omni only; "
                      "repeatable, at most 2)")
          ->type_name("FILE"));
  ask->add_option("--keep-alive", flags.keep_alive,
                  "Ollama: keep the model loaded (seconds, or a duration like 5m; -1 = forever)");
  CLI::Option* json =
      ask->add_flag("--json", flags.json, "Print one JSON document (same as --format json)");
  ask->add_option("--format", flags.format, "human | json | jsonl | tsv | values")
      ->check(CLI::IsMember({"human", "json", "jsonl", "tsv", "values"}))
      ->excludes(json);
  CLI::Option* dry_run = ask->add_flag("--dry-run", flags.dry_run,
                                       "Print the request body (URL on stderr) and send nothing");
  ask->add_flag("--print-curl", flags.print_curl,
                "Print a curl command that sends the same request (the token read from the same "
                "file or variable) and send nothing")
      ->excludes(dry_run);
  one_value_each(ask->add_option("--expect", flags.expects,
                                 "Gate: exit 1 unless NAME's winner is LABEL (a choice label, "
                                 "yes/no/unknown, a score level or its index); repeatable"));
  ask->add_option("--min-confidence", flags.min_confidence,
                  "Gate: exit 1 if any answer's confidence (1 - H/ln N) is below X")
      ->check(finite_number() & CLI::Range(0.0, 1.0));
  ask->add_option("--policy", flags.policy,
                  "Thresholds from `clef eval --fit-thresholds`: an answer below its threshold "
                  "is abstained (exit 8: ask a person)")
      ->type_name("FILE");
  add_connection_flags(*ask, flags.connection);
  return ask;
}

namespace {

/// --record, the one file ask writes, is none of those it reads: the recorder appends to it (and
/// mends its last line) after the state and the images were read from it.
Status check_record_is_no_input(const AskFlags& flags) {
  const ConnectionFlags& connection = flags.connection;
  std::vector<NamedFile> inputs = connection_inputs(connection);
  inputs.push_back({"--state-file", flags.state.file});
  inputs.push_back({"--policy", flags.policy});
  if (flags.state.json.rfind('@', 0) == 0)
    inputs.push_back({"--state-json", flags.state.json.substr(1)});
  for (const auto& file : flags.questions.files) inputs.push_back({"--questions", file});
  for (const auto& file : flags.attachments.images) inputs.push_back({"--image", file});
  for (const auto& file : flags.attachments.audio) inputs.push_back({"--audio", file});
  for (const auto& file : flags.attachments.videos) inputs.push_back({"--video", file});
  return check_no_output_is_an_input({{"--record", connection.record}}, inputs);
}

/// --dry-run and --print-curl: everything but the sending.
int print_without_sending(const AskFlags& flags, const Client& client,
                          const DecisionRequest& request, const Context& context) {
  auto body = client.request_body(request);
  if (!body) return report(context, body.error(), flags.connection);
  if (flags.print_curl) {
    context.out << curl_command(client, request, body.value(), flags.connection) << "\n";
    return as_int(ExitCode::ok);
  }
  context.err << "POST " << client.endpoint(request) << "\n";
  for (const auto& [name, value] : client.redacted_headers(request))
    context.err << name << ": " << value << "\n";
  context.out << body.value() << "\n";
  return as_int(ExitCode::ok);
}

/// Prints the decision and turns it into the exit code: unusable answers, then abstentions, then
/// the gates.
int conclude(const AskFlags& flags, const Decision& decision, const DecisionRequest& request,
             const std::vector<Question>& questions, const std::vector<Gate>& gates,
             const Context& context) {
  print_decision(flags, decision, questions, request, context);
  bool all_ok = true;
  bool abstained = false;
  for (const auto& answer : decision.answers) {
    if (answer.ok()) continue;
    if (answer.status == AnswerStatus::abstained) {
      abstained = true;
      context.err << "clef: abstained: " << answer.question << " ("
                  << terminal_safe_line(answer.winner())
                  << ") is not confident enough for the policy: ask a person\n";
      continue;
    }
    all_ok = false;
    print_error(context, "no usable answer for \"" + answer.question + "\" (" +
                             to_string(answer.status) + "): " + answer.problem);
  }
  if (!all_ok) return as_int(ExitCode::server);
  if (abstained) return as_int(ExitCode::abstained);
  const auto failures = failed_gates(decision, gates, flags.min_confidence);
  for (const auto& failure : failures)
    context.err << "clef: gate failed: " << terminal_safe(failure) << "\n";
  return as_int(failures.empty() ? ExitCode::ok : ExitCode::gate_failed);
}

}  // namespace

int run_ask(const AskFlags& flags, const CLI::App& command, const Context& process) {
  const Context context = cancelled_at_first_signal(process);
  if (auto status = check_record_is_no_input(flags); !status)
    return report(context, status.error(), flags.connection);
  auto questions = collect_questions(flags.questions, command);
  if (!questions) return report(context, questions.error(), flags.connection);
  auto gates = parse_gates(flags.expects, questions.value());
  if (!gates) return report(context, gates.error(), flags.connection);
  auto state = read_state(flags.state, context.in, context.stdin_is_piped);
  if (!state) return report(context, state.error(), flags.connection);
  auto request = build_request(std::move(state).value(), questions.value(), flags.attachments,
                               flags.keep_alive);
  if (!request) return report(context, request.error(), flags.connection);
  if (auto note = unheard_soundtracks(request->videos))
    context.err << "clef: note: " << *note << "\n";
  auto policy = load_policy(flags.policy, questions.value(), flags.connection.model, context);
  if (!policy) return report(context, policy.error(), flags.connection);

  const bool offline = flags.dry_run || flags.print_curl;
  auto client = make_client(flags.connection, context, offline);
  if (!client) return report(context, client.error(), flags.connection);
  if (offline) return print_without_sending(flags, client.value(), request.value(), context);

  // -v: the transport shows each attempt; this adds the whole call's time, retries included.
  const auto started = std::chrono::steady_clock::now();
  auto decision = client->decide(request.value());
  if (flags.connection.verbose) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    context.err << "clef: " << (decision ? "answered" : "failed") << " in " << ms.count()
                << " ms\n";
  }
  if (!decision) {
    if (int code = cassette_failure_exit(client.value(), context)) return code;
    return report(context, decision.error(), flags.connection);
  }
  if (*policy) (*policy)->apply(decision.value());
  const int concluded =
      conclude(flags, decision.value(), request.value(), questions.value(), gates.value(), context);
  // An answer paid for is shown even when its recording failed; the exit says the cassette.
  if (int code = cassette_failure_exit(client.value(), context)) return code;
  return concluded;
}

}  // namespace clef::cli
