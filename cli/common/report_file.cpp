// The implementation of report_file.hpp.
#include "common/report_file.hpp"

#include "common/output_target.hpp"
#include "common/replacement_file.hpp"
#include "common/signals.hpp"

namespace clef::cli {

Status write_report(const std::string& path, const std::string& text, const char* what) {
  const OutputPath target = output_path(path);
  Status written;
  if (!descriptor_named(path) &&
      (target.kind == PathKind::regular || target.kind == PathKind::missing)) {
    written = replace_file(target.path, text);
  } else {
    auto out = FdWriter::open(descriptor_named(path) ? path : target.path, interrupted_flag());
    if (!out) return out.error();
    written = out->write_line(text.size() && text.back() == '\n' ? text.substr(0, text.size() - 1)
                                                                 : text);
    if (written) written = out->flush();
  }
  if (written) return {};
  Error error = written.error();
  if (error.kind != ErrorKind::cancelled) {
    error.message = std::string("cannot write ") + what + ": " + error.message;
    error.kind = ErrorKind::invalid_input;
  }
  error.where = path;
  return error;
}

}  // namespace clef::cli
