// Helpers the NCCL rules share: events of a kind, citing them, members.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diagnose/evidence.h"
#include "fabcheck/model/coll.h"

namespace fabcheck::diagnose {

// Events of one kind, in the order they were printed.
std::vector<const model::NcclEvent*> EventsOf(const model::NcclLogSummary& log, std::string_view kind);
// "job.log:812: node-a: NET/IB: Got completion ... (x24)"
std::string Cite(const model::NcclEvent& event);
// An event's field or "".
std::string Field(const model::NcclEvent& event, const std::string& name);
// Whether inter-node traffic was needed: NET channels seen, or more than one node.
bool NeedsNetwork(const model::NcclLogSummary& log);
// Whether the log shows the job needed the network: yes (NET channels, or
// NCCL said nNodes > 1), no (NCCL said nNodes 1, or channel lines all within
// one host and none over NET), or unknown (an excerpt that says neither:
// absence of channel lines is not evidence of one node).
enum class NetworkNeed { kNeeded, kNotNeeded, kUnknown };
NetworkNeed NetworkNeedOf(const model::NcclLogSummary& log);
// The address NCCL bootstrapped on for a host ("10.0.0.5" from "eth0:10.0.0.5<0>"); "" unknown.
std::string BootstrapAddress(const model::NcclLogSummary& log, const std::string& host);
// The interface NCCL bootstrapped on ("eth0"); "" unknown.
std::string BootstrapInterface(const model::NcclLogSummary& log, const std::string& host);
// Hosts, comma separated, at most `max` then "and N more".
std::string HostList(const std::vector<std::string>& hosts, size_t max = 8);

}  // namespace fabcheck::diagnose
