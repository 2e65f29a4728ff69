#include "logs/nccl_ras.h"

#include <regex>

#include "base/strings.h"

namespace fabcheck::logs {
namespace {

using RasMatch = std::match_results<std::string_view::const_iterator>;

bool RasSearch(std::string_view text, RasMatch& m, const std::regex& re) {
  return std::regex_search(text.begin(), text.end(), m, re);
}

// "  Process 4242 on node 10.0.0.12 managing GPU 3", "... managing GPUs 0,1"
const std::regex kProcess(R"(^\s*Process (\d+) on node (\S+) managing GPUs? (\S+))");
// "  Rank 13 -- GPU 5 managed by process 4242 on node 10.0.0.12"
const std::regex kRank(R"(^\s*Rank (\d+) -- GPU (\S+) managed by process (\d+) on node (\S+))");
const std::regex kRankUnknown(R"(^\s*Rank (\d+) -- \[process information not found\])");
// "#0-0 (3f2a9c0d11e5b7a4) INCOMPLETE" / "... ERROR"
const std::regex kCommHeader(R"(^(#\d+-\d+ \([0-9a-f]+\)) (INCOMPLETE|ERROR|MISMATCH))");
const std::regex kTimeouts(R"(Encountered (\d+) communication timeout)");
const std::regex kVersion(R"(^NCCL version (\S+))");
// Job summary rows: "      2          8            1         16       16" or the short form.
const std::regex kSummary5(R"(^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$)");
const std::regex kSummary3(R"(^\s*(\d+)\s+(\d+)\s+(\d+)\s*$)");

}  // namespace

bool LooksLikeRasText(std::string_view head) {
  head = head.substr(0, 4096);
  return head.find("Job summary\n===========") != std::string_view::npos ||
         head.find("Gathering data about the RAS network") != std::string_view::npos ||
         (head.find("Errors\n======") != std::string_view::npos && head.find("Process ") != std::string_view::npos);
}

RasReport ParseRasText(std::string_view text) {
  RasReport r;
  std::string section;   // "summary", "errors", "warnings"
  std::string state;     // "missing", "dead" within Errors
  std::string comm;      // the communicator block we are in
  bool summary_next = false;
  int n = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++n;
    if (line.size() > 4096) line = line.substr(0, 4096);
    std::string_view t = Trim(line);
    RasMatch m;
    if (r.nccl_version.empty() && RasSearch(line, m, kVersion)) r.nccl_version = m[1].str();
    if (t == "Job summary") section = "summary";
    if (t == "Errors") section = "errors", state.clear(), comm.clear();
    if (t == "Warnings") section = "warnings", state.clear(), comm.clear();
    if (section == "summary") {
      if (StartsWith(t, "(total)")) {
        summary_next = true;
        continue;
      }
      if (summary_next) {
        summary_next = false;
        if (RasSearch(line, m, kSummary5)) {
          r.nodes = static_cast<int>(ParseInt(m[1].str()).value_or(0));
          r.processes = static_cast<int>(ParseInt(m[4].str()).value_or(0));
          r.gpus = static_cast<int>(ParseInt(m[5].str()).value_or(0));
        } else if (RasSearch(line, m, kSummary3)) {
          r.nodes = static_cast<int>(ParseInt(m[1].str()).value_or(0));
          r.processes = static_cast<int>(ParseInt(m[2].str()).value_or(0));
          r.gpus = static_cast<int>(ParseInt(m[3].str()).value_or(0));
        }
      }
      continue;
    }
    if (RasSearch(line, m, kTimeouts)) r.timeouts += static_cast<int>(ParseInt(m[1].str()).value_or(0));
    if (section != "errors") continue;
    if (t == "INCOMPLETE") {
      state = "missing";
      comm.clear();
      continue;
    }
    if (t == "DEAD") {
      state = "dead";
      comm.clear();
      continue;
    }
    if (RasSearch(line, m, kCommHeader)) {
      comm = m[1].str();
      state.clear();
      if (m[2].str() == "ERROR") r.comm_errors.push_back(comm + " ERROR");
      continue;
    }
    if (!comm.empty() && !r.comm_errors.empty() && StartsWith(r.comm_errors.back(), comm) &&
        t.find("error") != std::string_view::npos) {
      r.comm_errors.back() += ": " + std::string(t);
      continue;
    }
    if (!state.empty() && RasSearch(line, m, kProcess)) {
      if (r.unreachable.size() < 100000) {
        r.unreachable.push_back({state, static_cast<int>(ParseInt(m[1].str()).value_or(0)), m[2].str(), m[3].str(), n});
      }
      continue;
    }
    if (!comm.empty() && RasSearch(line, m, kRank)) {
      if (r.missing_ranks.size() < 100000) {
        r.missing_ranks.push_back({comm, static_cast<int>(ParseInt(m[1].str()).value_or(-1)), m[2].str(),
                                   static_cast<int>(ParseInt(m[3].str()).value_or(0)), m[4].str(), n});
      }
      continue;
    }
    if (!comm.empty() && RasSearch(line, m, kRankUnknown)) {
      if (r.missing_ranks.size() < 100000) {
        r.missing_ranks.push_back({comm, static_cast<int>(ParseInt(m[1].str()).value_or(-1)), "", 0, "", n});
      }
    }
  }
  return r;
}

}  // namespace fabcheck::logs
