// The implementation of man_page.hpp: roff from the CLI11 definitions.
#include "commands/man_page.hpp"

#include <cstdio>
#include <sstream>

#include "common/exit_codes.hpp"

namespace clef::cli {
namespace {

/// Text safe in roff: backslashes escaped, hyphens as \- (what man(7) asks of options and
/// commands, so they copy and search as typed), no line starting with a control character, and
/// anything beyond ASCII as a \[uXXXX] escape, which groff reads whatever the locale.
std::string roff_text(const std::string& text) {
  std::string out;
  bool line_start = true;
  bool bold = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '`') {  // `clef batch --shard K/N` in help text: a command, set in bold
      out += (bold = !bold) ? "\\fB" : "\\fR";
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A UTF-8 sequence (clef's help text is UTF-8): its code point.
      const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
      unsigned long point = c & (extra == 3 ? 0x07u : extra == 2 ? 0x0Fu : 0x1Fu);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k)
        point = (point << 6) | (static_cast<unsigned char>(text[++i]) & 0x3Fu);
      char escape[16];
      std::snprintf(escape, sizeof escape, "\\[u%04lX]", point);
      out += escape;
    }
  }
  if (bold) out += "\\fR";
  return out;
}

/// A one-line help as a sentence: capitalised and ending with a full stop.
std::string sentence(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 32);
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

struct Described {
  const char* name;
  const char* meaning;
};

/// Every variable clef reads (tests/CMakeLists.txt clears the same list in each test).
const std::vector<Described>& environment() {
  static const std::vector<Described> variables = {
      {"OLLAMA_HOST",
       "The Ollama server when --host is not given (as Ollama's own tools read it)."},
      {"CLOUDFLARE_ACCOUNT_ID", "Workers AI: the account, when --account-id is not given."},
      {"CLOUDFLARE_API_TOKEN",
       "Workers AI: the API token (never printed, never on a command line)."},
      {"CF_AIG_TOKEN",
       "Through AI Gateway: an Authenticated Gateway's token (cf-aig-authorization), when "
       "--aig-token-file is not given; else the Workers AI token is sent there too."},
      {"CLEF_API_KEY", "--backend systemone: an optional Bearer token."},
      {"OPENAI_API_KEY", "--backend openai: the API key (never printed, never on a command line)."},
      {"CLEF_CACHE_DIR", "Turns the decision cache on in this directory (as --cache DIR)."},
      {"https_proxy, HTTPS_PROXY, http_proxy, all_proxy, ALL_PROXY",
       "A proxy, read as curl reads them (HTTP_PROXY in upper case never is); a loopback host is "
       "always reached directly."},
      {"no_proxy, NO_PROXY", "Hosts reached without the proxy."},
      {"CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR",
       "Certificate authorities for TLS (--ca-cert wins)."},
      {"CURL_HOME, SSLKEYLOGFILE", "Read by libcurl beneath clef."},
      {"NO_COLOR", "Set: no colour with --color auto (https://no-color.org)."},
      {"TERM", "dumb: no colour and no progress bar redrawn in place."},
      {"COLUMNS", "The terminal's width for the human view."},
      {"JOB_COMPLETION_INDEX", "clef batch --shard auto: the shard of a Kubernetes Indexed Job."},
      {"SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN, "
       "SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP",
       "clef batch --shard auto: the shard of a Slurm job array ((ID - MIN) / STEP of the whole "
       "array; with --shards N, an array of fewer tasks takes each ID as its shard)."},
      {"AWS_BATCH_JOB_ARRAY_INDEX",
       "clef batch --shard auto: the shard of an AWS Batch array job (N from --shards)."},
      {"BATCH_TASK_INDEX, BATCH_TASK_COUNT",
       "clef batch --shard auto: the shard of a Google Cloud Batch job, and how many there are."},
      {"NOMAD_ALLOC_INDEX",
       "clef batch --shard auto refuses it: a rescheduled Nomad allocation can repeat an index "
       "(give --shard K/N from the job's meta)."},
      {"MALLOC_CONF",
       "Read by jemalloc, clef's allocator (not clef's own): its options, as jemalloc documents "
       "them. Leave it unset."},
  };
  return variables;
}

const std::vector<Described>& files() {
  static const std::vector<Described> paths = {
      {"OUT.clef-run.json",
       "clef batch -o OUT: the run record beside the output (backend, endpoint, model, questions, "
       "shard), which --resume checks before it appends."},
      {"--cache DIR (or $CLEF_CACHE_DIR)",
       "The decision cache: one file per answer, keyed by a SHA-256 of the request and the model's "
       "version (clef cache stats|clear)."},
      {"--record FILE, --replay FILE",
       "A cassette: every exchange with the server as JSON lines, replayed with no server."},
      {"--hosts FILE", "clef batch: one server URL a line, # comments."},
      {"--questions FILE", "The questions, as JSON (an object of named questions)."},
  };
  return paths;
}

void write_synopsis(std::ostream& out, const ManPageSource& source) {
  out << ".SH SYNOPSIS\n.B " << roff_text(source.command_line) << "\n";
  if (source.lists_commands) {
    out << "[\\fB\\-\\-color\\fR \\fIWHEN\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B "
        << roff_text(source.command_line) << "\n\\fB\\-\\-version\\fR | \\fB\\-\\-help\\fR\n";
    return;
  }
  out << "[\\fIOPTIONS\\fR]";
  for (const CLI::Option* option : source.command->get_options()) {
    if (!option->get_lnames().empty() || !option->get_snames().empty()) continue;
    const bool many = option->get_items_expected_max() > 1;
    out << (option->get_required() ? " \\fI" : " [\\fI") << roff_text(option->get_name()) << "\\fR"
        << (many ? "..." : "") << (option->get_required() ? "" : "]");
  }
  out << "\n";
}

/// "\fB\-o\fR, \fB\-\-output\fR \fIFILE\fR"
std::string option_heading(const CLI::Option& option) {
  std::string heading;
  for (const std::string& name : option.get_snames())
    heading += (heading.empty() ? "" : ", ") + std::string("\\fB\\-") + roff_text(name) + "\\fR";
  for (const std::string& name : option.get_lnames())
    heading += (heading.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff_text(name) + "\\fR";
  if (option.get_items_expected_max() > 0) {
    // CLI11's "FLOAT:FLOAT in [0 - 1]" or "TEXT:{auto,always,never}": the type; the help says
    // the range or the words.
    std::string type = option.get_type_name();
    type = type.substr(0, type.find(':'));
    heading += " \\fI" + roff_text(type.empty() ? std::string("VALUE") : type) + "\\fR";
  }
  return heading;
}

std::string option_help(const CLI::Option& option) {
  std::string help = option.get_description();
  const std::string fallback = option.get_default_str();
  if (!fallback.empty() && help.find("default") == std::string::npos)
    help += " (default: " + fallback + ")";
  if (option.get_items_expected_max() > 1 && help.find("repeat") == std::string::npos)
    help += " (repeatable)";
  return roff_text(help);
}

void write_options(std::ostream& out, const CLI::App& command) {
  bool arguments = false;
  for (const CLI::Option* option : command.get_options()) {
    if (!option->get_lnames().empty() || !option->get_snames().empty()) continue;
    if (!arguments) out << ".SH ARGUMENTS\n";
    arguments = true;
    out << ".TP\n\\fI" << roff_text(option->get_name()) << "\\fR\n"
        << roff_text(option->get_description()) << "\n";
  }
  out << ".SH OPTIONS\n";
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_lnames().empty() && option->get_snames().empty()) continue;
    out << ".TP\n" << option_heading(*option) << "\n" << option_help(*option) << "\n";
  }
}

void write_commands(std::ostream& out, const CLI::App& root) {
  out << ".SH COMMANDS\n";
  for (const CLI::App* command : root.get_subcommands([](const CLI::App*) { return true; })) {
    out << ".TP\n\\fB" << roff_text(command->get_name()) << "\\fR\n"
        << roff_text(sentence(command->get_description())) << " See \\fBclef\\-"
        << roff_text(command->get_name()) << "\\fR(1).\n";
  }
}

/// The footer --help prints ("Examples:" and indented command lines), as a literal block; the
/// footer's one-line list of exit codes is left to EXIT STATUS.
void write_examples(std::ostream& out, const CLI::App& command) {
  std::istringstream footer(command.get_footer());
  std::string line;
  bool any = false;
  while (std::getline(footer, line)) {
    if (line.rfind("Exit codes:", 0) == 0) break;  // the page's EXIT STATUS says them in full
    if (line.rfind("Examples:", 0) == 0 || line.empty()) continue;
    if (!any) out << ".SH EXAMPLES\n.nf\n";
    any = true;
    out << roff_text(line.substr(line.find_first_not_of(' ') == std::string::npos
                                     ? line.size()
                                     : std::min<std::size_t>(2, line.find_first_not_of(' '))))
        << "\n";
  }
  if (any) out << ".fi\n";
}

void write_table(std::ostream& out, const char* title, const std::vector<Described>& rows) {
  out << ".SH " << title << "\n";
  for (const Described& row : rows)
    out << ".TP\n\\fB" << roff_text(row.name) << "\\fR\n" << roff_text(row.meaning) << "\n";
}

void write_exit_status(std::ostream& out) {
  out << ".SH EXIT STATUS\n";
  for (const ExitCodeMeaning& exit : exit_code_meanings())
    out << ".TP\n\\fB" << as_int(exit.code) << "\\fR\n" << roff_text(exit.meaning) << "\n";
}

}  // namespace

std::string man_page(const ManPageSource& source) {
  std::ostringstream out;
  std::string upper;
  for (const char c : source.page)
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out << ".\\\" Generated by clef_man_pages from clef's command-line definitions; edit those.\n"
      << ".TH " << roff_text(upper) << " 1 \"\" \"" << roff_text(source.version)
      << "\" \"clef manual\"\n.ad l\n";
  std::string summary = source.command->get_description();
  if (const auto colon = summary.find(": "); colon != std::string::npos && colon < 12)
    summary = summary.substr(colon + 2);  // "clef mock: a System One server…" → its summary
  out << ".SH NAME\n" << roff_text(source.page) << " \\- " << roff_text(summary) << "\n";
  write_synopsis(out, source);
  out << ".SH DESCRIPTION\n" << roff_text(sentence(summary)) << "\n";
  if (source.lists_commands) write_commands(out, *source.command);
  write_options(out, *source.command);
  write_examples(out, *source.command);
  write_exit_status(out);
  write_table(out, "ENVIRONMENT", environment());
  write_table(out, "FILES", files());
  out << ".SH SEE ALSO\n";
  for (std::size_t i = 0; i < source.see_also.size(); ++i)
    out << "\\fB" << roff_text(source.see_also[i]) << "\\fR(1)"
        << (i + 1 < source.see_also.size() ? ",\n" : "\n");
  return out.str();
}

}  // namespace clef::cli
