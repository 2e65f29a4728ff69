#include "diagnose/jobs.h"

#include <fmt/format.h>

#include <map>
#include <numeric>

#include "logs/job_ids.h"
#include "logs/nccl_log.h"

namespace fabcheck::diagnose {

std::vector<JobLogs> SplitLogsByJob(const Evidence& ev) {
  if (!ev.nccl || ev.nccl->files.size() < 2) return {};
  const auto& files = ev.nccl->files;
  for (const auto& f : files) {
    if (f == "-" || f == "stdin") return {};
  }
  // Union-find over files: two files naming one commId are one job.
  std::vector<size_t> parent(files.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, size_t> owner;  // commId -> first file naming it
  std::vector<std::string> first_id(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    auto ids = logs::CommIdsOf(files[i]);
    if (!ids.ok()) return {};  // a log inside an archive, or gone: read them together, as given
    if (ids->empty()) continue;
    first_id[i] = *ids->begin();
    for (const auto& id : *ids) {
      auto [it, inserted] = owner.emplace(id, i);
      if (!inserted) parent[root(i)] = root(it->second);
    }
  }
  // A log that names no commId cannot be placed: it stays with the others
  // when they are one job, and is its own group otherwise.
  std::map<size_t, std::vector<size_t>> groups;
  for (size_t i = 0; i < files.size(); ++i) groups[root(i)].push_back(i);
  size_t with_id = 0;
  for (const auto& [r, members] : groups) {
    for (size_t i : members) {
      if (!first_id[i].empty()) {
        ++with_id;
        break;
      }
    }
  }
  if (with_id <= 1) return {};
  std::vector<JobLogs> jobs;
  for (const auto& [r, members] : groups) {
    JobLogs job;
    for (size_t i : members) {
      job.files.push_back(files[i]);
      if (job.id.empty() && !first_id[i].empty()) job.id = "job " + first_id[i].substr(0, 10);
    }
    if (job.id.empty()) job.id = "job of " + job.files.front();
    auto summary = logs::ParseNcclLogFiles(job.files);
    if (!summary.ok()) continue;  // read once already; a file that vanished since is left out
    job.nccl = std::move(summary).value();
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace fabcheck::diagnose
