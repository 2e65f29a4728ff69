// Reading NCCL's log, and the framework lines around it, into model values:
// which transport every connection used, the NICs NCCL opened, the GPUDirect
// RDMA decisions, the bootstrap interface, the NCCL version, the plugins,
// and the failures (work-completion errors, socket and verbs failures,
// plugin problems, watchdog timeouts) with the file and line they came from.
// The rules over these values live in diagnose/ (catalog: docs/diagnose.md),
// their text in report/nccl_log_text.h.
//
// Formats: NCCL 2.5 to 2.28 ("Ring NN : a[b] -> c[d] via", "via direct shared
// memory", "Channel NN/M : a[b] -> c[d] [send] via NET/<name>/<dev>"; busId or
// nvmlDev in the brackets; "Bootstrap :" and "Bootstrap:"; the GDR line with
// bus id or rank; the path-type tables that shifted in 2.26 and 2.27/2.28),
// lines as users paste them (line_clean.h), lines whose host:pid:tid prefix
// was removed, and two processes writing one file with lines cut mid-way:
// such fragments never become host names. Memory stays bounded whatever the
// input (connections, events and warnings are capped and counted), and time
// is linear in the number of lines and hosts.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::logs {

// NCCL's path-type name for a distance printed by NCCL `version` (22803 for
// 2.28.3; 0 when unknown: the newest table is used). "PATH<n>" when out of range.
std::string NcclPathTypeName(int distance, int version);

// "2.28.3+cuda13.0" -> 22803, "2.7.8" -> 20708; 0 when unparseable.
int NcclVersionCode(std::string_view version_text);

class NcclLogParser {
 public:
  NcclLogParser();
  ~NcclLogParser();
  NcclLogParser(const NcclLogParser&) = delete;
  NcclLogParser& operator=(const NcclLogParser&) = delete;

  // Adds one file's text; `name` is what evidence cites ("name:line").
  void AddText(std::string_view text, std::string_view name);
  // Streams a file ("-" = stdin) line by line (bounded memory); NotFound /
  // PermissionDenied naming it when unreadable; ResourceExhausted past 64 GiB
  // for a file or 256 MiB for a pipe, FIFO or device (what was read before
  // the limit is kept); DeadlineExceeded for a pipe that stays silent.
  Status AddFile(const std::string& path);
  // NCCL lines seen so far (all files).
  int nccl_lines() const;
  // One raw line of `file` (1-based line_number), for callers that stream themselves.
  void AddLine(std::string_view raw, std::string_view file, int line_number);
  // The summary. Its `findings` are empty: the rules (diagnose) add them.
  model::NcclLogSummary Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Parses these files. Fails only when no file could be read; an unreadable
// file among readable ones gives a "nccl.log.unreadable" finding.
Result<model::NcclLogSummary> ParseNcclLogFiles(const std::vector<std::string>& paths);

}  // namespace fabcheck::logs
