// Reading NCCL's own INFO log: which transport every connection used, the
// NICs NCCL opened, the GPUDirect RDMA decisions, the bootstrap interface and
// the NCCL version; then plain verdicts over that (nccl_log_verdicts.cc).
//
// Formats covered: NCCL 2.18 to 2.28 (rdma-facts.md section 8, and the
// versions' differences: busId vs nvmlDev in channel lines, "Bootstrap :" vs
// "Bootstrap:", GPU as bus id vs rank in the GDR line, the path-type numbers
// that shifted in 2.26 (C2C) and 2.27/2.28 (P2C)). Lines from many hosts and
// ranks may be interleaved, prefixed by launchers ("[1,0]<stdout>:", "0: ")
// or by NCCL's own timestamp. Anything else is skipped; nothing here fails
// on bad input.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::coll {

// NCCL's path-type name for a distance printed by NCCL `version` (22803 for
// 2.28.3; 0 when unknown: the newest table is used). "PATH<n>" when out of range.
std::string NcclPathTypeName(int distance, int version);

// "2.28.3+cuda13.0" -> 22803; 0 when unparseable.
int NcclVersionCode(std::string_view version_text);

class NcclLogParser {
 public:
  // Adds one file's text; `name` is what findings cite.
  void AddText(std::string_view text, std::string_view name);
  // Reads and adds a file; NotFound/PermissionDenied naming it when unreadable.
  Status AddFile(const std::string& path);
  // The summary with its findings (NcclLogVerdicts).
  model::NcclLogSummary Finish();

 private:
  struct Process;  // per host:pid state
  void AddLine(std::string_view line, std::string_view file, int line_number);

  model::NcclLogSummary summary_;
  std::map<std::string, int> process_version_;       // "host:pid" -> version code
  std::vector<std::pair<std::string, int>> gdr_process_;  // per gdr entry: its "host:pid", raw distance/limit naming later
  std::map<std::string, std::map<int, std::string>> rank_bus_;  // host -> rank -> busId
  bool ib_no_device_ = false;
  std::vector<std::string> hca_gdr_off_;  // "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
  std::vector<std::string> evidence_socket_;  // first socket channel lines
  std::vector<std::string> evidence_ib_nogdr_;
};

// Plain verdicts over a parsed log (stable IDs nccl.*).
std::vector<model::Finding> NcclLogVerdicts(const model::NcclLogSummary& summary, bool ib_no_device,
                                            const std::vector<std::string>& hca_gdr_off);

// Convenience: parse these files. Fails only when no file could be read.
Result<model::NcclLogSummary> ParseNcclLogFiles(const std::vector<std::string>& paths);

// A short human summary (what `fabcheck nccl-log` prints without --json).
std::string FormatNcclLogSummary(const model::NcclLogSummary& summary);

}  // namespace fabcheck::coll
